"""Exact value of a deterministic bot's one-turn play, by enumerating every roll it can meet.

Simulation measures a bot's mean turn score with a standard error of about 540 / sqrt(n)
points (ten_thousand), so telling 99.5% from 99% of the optimum (a 3-point gap) would need
hundreds of thousands of turns. A deterministic policy needs no sampling at all: from the
start of a turn, every chance node is expanded into its exact roll distribution
(:func:`~greed_env.rules.chance_outcomes`), the bot is asked once for its move at every
decision it can reach (in batches, so a neural policy runs one forward pass per wave), and the
resulting graph is solved for its expected banked points. The result is the expectation the
simulation estimates, to floating-point accuracy.

The turn is the one of ``Solitaire-v0``'s ``turn`` objective: a single player already on the
board, banked score 0, one turn; its value counts turns whose first roll scores nothing as 0,
as the solver's ``turn`` table does. Turn totals are capped (``cap_points``): a position with
at least that many points in the turn is valued as banking them, and the probability of ever
reaching one is reported, so the cap's effect is bounded (it is far beyond where any sensible
policy banks). Greed's reroll-all can revisit a position, so the graph is solved by iteration
to a fixed point rather than one backward pass.

>>> from greed_env.rules import preset
>>> from greed_env.bots.base import ThresholdBot
>>> res = turn_value(ThresholdBot(bank_at=300), preset("ten_thousand"))
>>> round(res.value, 3), res.decisions > 100
(478.692, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from greed_env.bots.base import Bot
from greed_env.bots.play import batch_moves
from greed_env.rules import Phase, Rules, State, apply, apply_roll, chance_outcomes, new_game
from greed_env.rules.game import is_chance

__all__ = ["EnumerationLimit", "TurnValue", "turn_value"]

_ROLL_RNG_SEED = 0


class EnumerationLimit(ValueError):
    """The bot's play reaches more positions than the enumeration was allowed to visit."""


@dataclass(frozen=True)
class TurnValue:
    """The exact expected points of one turn under a bot's (deterministic) play.

    Attributes:
        value: expected points banked in the turn (first-roll busts count as 0).
        p_cap: probability of reaching a turn total of ``cap_points`` (valued as banking it).
        cap_points: the cap used.
        positions: distinct positions enumerated (chance and decision).
        decisions: distinct decision positions the bot was asked about.
        sweeps: fixed-point iterations of the solve (one more than the longest chain on a
            graph without cycles).
    """

    value: float
    p_cap: float
    cap_points: int
    positions: int
    decisions: int
    sweeps: int


def _key(s: State) -> State:
    return s._replace(event="") if s.event else s


def turn_value(
    bot: Bot,
    rules: Rules,
    *,
    cap_points: int = 20_000,
    tol: float = 1e-12,
    max_sweeps: int = 100_000,
    batch: int = 8192,
    rng: np.random.Generator | None = None,
    max_positions: int = 5_000_000,
) -> TurnValue:
    """Exact expected points of one turn played by ``bot`` (see the module docstring).

    ``bot`` must be deterministic (greedy policies, the solver's bots, threshold bots): it is
    asked once per position and that move is taken as its play there. ``rng`` is passed to
    bots that take one (default: a fixed-seed generator). A near-optimal ten_thousand policy
    meets about 200,000 positions (10-20 s of CPU); an untrained one that keeps rolling meets
    every turn total up to the cap, hence ``max_positions``.

    Raises:
        EnumerationLimit: more than ``max_positions`` positions.
        ValueError: ``cap_points`` not positive, or the solve does not converge in
            ``max_sweeps`` (a policy that can cycle forever without risk).
    """
    if cap_points <= 0:
        raise ValueError(f"cap_points must be positive, got {cap_points}")
    rng = rng if rng is not None else np.random.default_rng(_ROLL_RNG_SEED)
    solo = rules if rules.min_players <= 1 else rules.replace(min_players=1)
    start = new_game(solo, 1)._replace(entered=(True,))
    start_turn, start_score = start.turns[0], start.scores[0]

    index: dict[State, int] = {}
    reward: list[float] = []  # terminal value, or 0.0
    capped: list[bool] = []
    terminal: list[bool] = []
    rows: list[int] = []
    cols: list[int] = []
    probs: list[float] = []
    decisions = 0

    def node(s: State) -> tuple[int, bool]:
        """Index of ``s`` (new: True when it still has to be expanded)."""
        k = _key(s)
        i = index.get(k)
        if i is not None:
            return i, False
        i = len(reward)
        if i >= max_positions:
            raise EnumerationLimit(
                f"the bot's turns reach more than {max_positions:,} positions (raise max_positions "
                "or lower cap_points)"
            )
        index[k] = i
        over = s.phase == Phase.OVER or s.turns[0] != start_turn
        if over:
            if s.phase == Phase.OVER and s.scores[0] == start_score:
                gain = s.turn_total
            else:
                gain = s.scores[0] - start_score
            reward.append(float(gain))
            capped.append(False)
            terminal.append(True)
            return i, False
        if s.turn_total >= cap_points:
            reward.append(float(s.turn_total))
            capped.append(True)
            terminal.append(True)
            return i, False
        reward.append(0.0)
        capped.append(False)
        terminal.append(False)
        return i, True

    root, _ = node(start)
    chance_todo: list[State] = [start]
    decision_todo: list[State] = []
    while chance_todo or decision_todo:
        while chance_todo:
            s = chance_todo.pop()
            i = index[_key(s)]
            for roll, p in chance_outcomes(rules, s):
                t = apply_roll(rules, s, roll)
                j, new = node(t)
                rows.append(i)
                cols.append(j)
                probs.append(p)
                if new:
                    (chance_todo if is_chance(t) else decision_todo).append(t)
        if decision_todo:
            wave, decision_todo = decision_todo[:batch], decision_todo[batch:]
            decisions += len(wave)
            for s, move in zip(wave, batch_moves(bot, rules, wave, rng), strict=True):
                t = apply(rules, s, move)
                j, new = node(t)
                rows.append(index[_key(s)])
                cols.append(j)
                probs.append(1.0)
                if new:
                    (chance_todo if is_chance(t) else decision_todo).append(t)

    n = len(reward)
    r = np.asarray(reward)
    term = np.asarray(terminal)
    cap_mask = np.asarray(capped, dtype=np.float64)
    row = np.asarray(rows, dtype=np.int64)
    col = np.asarray(cols, dtype=np.int64)
    w = np.asarray(probs)
    # Jacobi iteration on V = R (terminal) | sum_j P_ij V_j; pass 2 values at once: points and
    # the probability of reaching the cap.
    v = np.where(term, r, 0.0)
    c = cap_mask.copy()
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        v_new = np.where(term, r, np.bincount(row, weights=w * v[col], minlength=n))
        c_new = np.where(term, cap_mask, np.bincount(row, weights=w * c[col], minlength=n))
        delta = max(float(np.max(np.abs(v_new - v))), float(np.max(np.abs(c_new - c))) * 1e3)
        v, c = v_new, c_new
        if delta <= tol * max(1.0, abs(float(v[root]))):
            break
    else:  # pragma: no cover - only a risk-free endless policy gets here
        raise ValueError(
            f"the turn values did not converge in {max_sweeps} sweeps: the policy can keep "
            "rolling without risk forever"
        )
    return TurnValue(
        value=float(v[root]),
        p_cap=float(c[root]),
        cap_points=int(cap_points),
        positions=n,
        decisions=decisions,
        sweeps=sweeps,
    )

