"""Where a greed turn policy loses points: the solver's regret by kind of decision.

Plays ``--turns`` turns of a player already on the board (seed 1) and scores every decision
with ``optimal-turn``'s move values, grouped as: the first keep from six dice, keeps after a
reroll of all six (a bar to beat), later keeps, and bank-or-roll. Then enumerates the 462
first rolls of six dice and lists the costliest first keeps. docs/results.md ("Greed: why PPO
stops at 96-98%") reports its output.

With ``--first-keep ROLL ...`` (e.g. ``112345``) it looks at those first rolls instead, as
docs/results.md ("Greed's first keep: what the training signal says") reports:

* the bot's greedy probabilities there (model files and ONNX bots) and, for each legal move,
  ``Q^pi``: the exact value of the turn with that move forced at that roll and the bot's own
  greedy play everywhere else (:func:`greed_env.evaluation.policy_value.turn_value`), against the
  solver's move value;
* ``--engine N``: the native training engine's mean return over ``N`` turns per move, the move
  forced and the solver's play after it (does the engine agree with the reference rules?);
* ``--critic N`` (model zips): the model's critic at the roll, and over ``N`` turns per move in
  the engine with the model's own sampled play after it, the mean return and the first move's
  GAE(0.95) advantage, as PPO computes it.

Usage::

    python scripts/greed_regret.py greed/ppo-turn
    python scripts/greed_regret.py runs/bench_ppo/greed__turn__w2mebar__1/model.zip --turns 3000
    python scripts/greed_regret.py MODEL.zip --first-keep 112345 123455 --engine 3000 --critic 10000
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from greed_env.bots import load
from greed_env.evaluation.policy_value import turn_value
from greed_env.rules import (
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    is_chance,
    new_game,
    preset,
    sample_roll,
)
from greed_env.solver import OptimalBot
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import encode_observation


class Forced:
    """``bot``'s greedy play, except ``action`` at the position observed as ``obs0``."""

    def __init__(self, bot: Any, obs0: np.ndarray, action: int, catalog: ActionCatalog) -> None:
        self.bot, self.obs0, self.action, self.catalog = bot, obs0, action, catalog
        self.temperature = 0.0

    def check_rules(self, rules: Rules) -> None:
        check = getattr(self.bot, "check_rules", None)
        if callable(check):
            check(rules)

    def act_ids(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        ids = np.array(greedy_ids(self.bot, observations, masks), copy=True)
        ids[(observations == self.obs0).all(axis=1)] = self.action
        return ids


def greedy_ids(bot: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The greedy action ids of a numpy policy bot (``act_ids``) or an ONNX one (``act_batch``)."""
    act_ids = getattr(bot, "act_ids", None)
    return np.asarray(act_ids(observations, masks) if callable(act_ids) else bot.act_batch(observations, masks))


def first_keep(args: argparse.Namespace, rules: Rules, opt: OptimalBot, bot: Any) -> None:
    """The ``--first-keep`` report (see the module docstring)."""
    solo = rules.replace(min_players=1)
    cat = ActionCatalog(rules)
    start = new_game(solo, 1)._replace(entered=(True,))
    base = turn_value(bot, rules).value
    model = None
    if args.bot.endswith(".zip"):
        from greed_env.bots.sb3_backend import load_sb3_model

        model = load_sb3_model(args.bot)[0]
    print(f"bot's exact turn value {base:.2f}")
    for text in args.first_keep:
        roll = tuple(sorted(int(c) for c in text))
        s0 = apply_roll(solo, start, roll)
        faces = Counter(roll)
        p = math.factorial(6) / math.prod(math.factorial(c) for c in faces.values()) / 6**6
        obs0 = encode_observation(rules, s0)
        mask, moves = cat.legal(s0)
        ids = list(moves)
        probs = dict.fromkeys(ids, math.nan)
        logits = getattr(bot, "logits", None)
        if model is not None:
            import torch

            with torch.no_grad():
                dist = model.policy.get_distribution(torch.as_tensor(obs0[None]), action_masks=mask[None])
                pr = dist.distribution.probs[0].numpy()
            probs = {a: float(pr[a]) for a in ids}
        elif callable(logits):
            z = np.asarray(logits(obs0[None]))[0][ids]
            e = np.exp(z - z.max())
            probs = dict(zip(ids, e / e.sum(), strict=True))
        qstar = {str(m): v for m, v in opt.move_values(rules, s0)}
        greedy = int(greedy_ids(bot, obs0[None], mask[None].astype(np.int8))[0])
        print(f"roll {roll} (probability {p:.4f}): the bot plays {moves[greedy]}")
        for a in sorted(ids, key=lambda a: -qstar[str(moves[a])]):
            forced = turn_value(Forced(bot, obs0, a, cat), rules).value
            print(f"  {moves[a]!s:14s} Q* {qstar[str(moves[a])]:6.1f}   Q^pi - Q^pi(bot's move) "
                  f"{(forced - base) / p:+6.1f}   probability {probs[a]:.4f}")
        if args.engine:
            engine_returns(rules, s0, cat, args.engine, lambda s, rng: opt.act(rules, s, rng), None, "solver's play")
        if args.critic and model is not None:
            engine_returns(rules, s0, cat, args.critic, None, model, "own sampled play")


def engine_returns(rules: Rules, s0: State, cat: ActionCatalog, n: int, play: Any, model: Any, label: str) -> None:
    """Mean return in the native engine of ``n`` turns from ``s0`` per legal move, then ``play``
    (a reference-state policy) or ``model``'s sampled actions; with ``model``, its critic's value
    of ``s0`` and the first move's GAE(0.95) advantage."""
    from greed_env.vector.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("greed_env/Solitaire-v0", n, seed=5, rules=rules, objective="turn")
    batch = venv.env.batch
    rng = np.random.default_rng(0)
    _, moves = cat.legal(s0)

    def forward(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import torch

        with torch.no_grad():
            x = torch.as_tensor(obs)
            actions = model.policy.get_distribution(x, action_masks=masks).get_actions(deterministic=False)
            return actions.numpy(), model.policy.predict_values(x)[:, 0].numpy()

    for first, move in moves.items():
        venv.reset()
        batch.restart_from({i: s0 for i in range(n)})
        values = [forward(batch.obs.copy(), venv.action_masks())[1]] if model is not None else []
        rewards, alive_steps = [], []
        alive = np.ones(n, bool)
        acts = np.full(n, first)
        while alive.any():
            alive_steps.append(alive.copy())
            venv.step_async(acts)
            obs, r, done, _ = venv.step_wait()
            rewards.append(r * alive)
            alive &= ~done
            if model is not None:
                acts, v = forward(obs, venv.action_masks())
                values.append(v * alive)
            else:
                for i in np.flatnonzero(alive):
                    s = State(**batch.fields(int(i)))
                    acts[i] = cat.index_of(play(s, rng), s)
        ret = np.sum(rewards, axis=0) * 1000
        line = f"    engine, {label}: {move!s:14s} {ret.mean():6.1f} ± {1.96 * ret.std() / math.sqrt(n):4.1f}"
        if model is not None:
            adv = np.zeros(n)
            for t in reversed(range(len(rewards))):
                delta = rewards[t] + values[t + 1] - values[t]
                adv = (delta + 0.95 * adv) * alive_steps[t]
            line += f"   critic V {values[0].mean() * 1000:6.1f}   GAE advantage {adv.mean() * 1000:+6.1f}"
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot", help="registry id or model file")
    ap.add_argument("--turns", type=int, default=3000)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--first-keep", nargs="+", default=None, metavar="ROLL", help="first rolls to look at, e.g. 112345")
    ap.add_argument("--engine", type=int, default=0, metavar="N", help="with --first-keep: N engine turns per move")
    ap.add_argument("--critic", type=int, default=0, metavar="N", help="with --first-keep and a model zip: N turns")
    args = ap.parse_args()
    rules = preset("greed")
    opt = OptimalBot(rules, "turn")
    bot = load(args.bot, rules=rules)
    if args.first_keep:
        first_keep(args, rules, opt, bot)
        return
    rng = np.random.default_rng(1)
    start = new_game(rules, 2, first_player=0)._replace(entered=(True, False), scores=(1000, 0))
    regret: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for _ in range(args.turns):
        s = start
        first = True
        while s.player == 0 and s.phase != Phase.OVER:
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
                continue
            values = {str(m): v for m, v in opt.move_values(rules, s)}
            move = bot.act(rules, s, rng)
            if s.phase != Phase.KEEP:
                kind = "bank or roll"
            elif first:
                kind = "first keep"
            else:
                kind = "keep after a reroll" if s.bar >= 0 else "later keep"
            regret[kind] += max(values.values()) - values[str(move)]
            count[kind] += 1
            first = first and s.phase != Phase.KEEP
            s = apply(rules, s, move)
    for kind in regret:
        print(f"{kind:20s} decisions {count[kind]:6d}  regret per turn {regret[kind] / args.turns:6.2f}"
              f"  per decision {regret[kind] / count[kind]:6.2f}")
    total, rows = 0.0, []
    for roll in itertools.combinations_with_replacement(range(1, 7), 6):
        faces = Counter(roll)
        p = math.factorial(6) / math.prod(math.factorial(c) for c in faces.values()) / 6**6
        s = apply_roll(rules, start, roll)
        values = {str(m): v for m, v in opt.move_values(rules, s)}
        if not values:
            continue
        move = str(bot.act(rules, s, rng))
        best = max(values, key=lambda m: values[m])
        loss = values[best] - values[move]
        total += p * loss
        if loss > 1e-9:
            rows.append((p * loss, roll, move, best, loss))
    print(f"first keeps, all rolls: {total:.2f} points per turn")
    for weighted, roll, move, best, loss in sorted(rows, reverse=True)[: args.top]:
        print(f"  {roll}: plays {move}, best {best}, regret {loss:.1f} (x probability {weighted:.3f})")


if __name__ == "__main__":
    main()
