"""Where a policy loses against the optimal duel bot: the same games with the optimal bot's
move substituted for the policy's in one kind of decision at a time.

For each variant the policy plays seat-balanced games against ``optimal-duel`` in the vector
engine, except that in the chosen decisions the optimal bot's own move is played instead:

* ``none``: the policy as it is;
* ``final-round``: every decision of the policy's last turn after the opponent reached the
  target (``ten_thousand``'s final round);
* ``bank-roll``: every bank-or-roll-on decision (all phases ``CONTINUE``);
* ``bank-roll-before-final``: the same outside the final round;
* ``keeps``: every choice of dice to keep;
* ``final-round-bank-roll`` / ``final-round-keeps``: the final round's two kinds of decision
  apart.

The gain of a variant over the first one listed (``none`` by default) is what the policy gives
away in those decisions (given its play elsewhere). All variants share ``--seed``, so they play the same dice streams.

``--lead-table`` prints instead how often the policy and the optimal bot bank in the policy's
final-round bank-or-roll decisions, by the lead banking would leave (my score plus the turn
total less the opponent's): with the lead in hand banking wins outright.

    python scripts/duel_gap.py runs/bench_ppo/ten_thousand__turn__ppo__1/model.zip --games 60000
"""

from __future__ import annotations

import argparse

import numpy as np

from greed_env.evaluation import resolve_bot
from greed_env.rules import Phase, preset
from greed_env.spaces.catalog import ActionCatalog
from greed_env.vector import kernels as K
from greed_env.vector.engine import EpisodeBatch

VARIANTS = (
    "none",
    "final-round",
    "bank-roll",
    "bank-roll-before-final",
    "keeps",
    "final-round-bank-roll",
    "final-round-keeps",
)


def substitute(variant: str, batch: EpisodeBatch) -> np.ndarray:
    """Rows whose decision the optimal bot makes in ``variant``."""
    phase = batch.S[:, K.C_PHASE]
    final = batch.S[:, K.C_ENDGAME] != 0
    return {
        "none": np.zeros(batch.num_envs, dtype=bool),
        "final-round": final,
        "bank-roll": phase == Phase.CONTINUE,
        "bank-roll-before-final": (phase == Phase.CONTINUE) & ~final,
        "keeps": phase == Phase.KEEP,
        "final-round-bank-roll": (phase == Phase.CONTINUE) & final,
        "final-round-keeps": (phase == Phase.KEEP) & final,
    }[variant]


ROWS = 2048


def duel_batch(rules: object, seat: int, seed: int) -> EpisodeBatch:
    """``ROWS`` duels of the learner in ``seat`` against ``optimal-duel``, reset with ``seed``."""
    opponent = resolve_bot("optimal", rules, "duel")
    batch = EpisodeBatch(rules, ROWS, mode="duel", num_players=2, seat=seat, opponent=opponent)
    batch.reset(seed=seed)
    return batch


def win_rate(bot: object, rules: object, variant: str, games: int, seed: int) -> tuple[float, float]:
    """Mean outcome and its 95% half-width over ``games`` seat-balanced games."""
    rows = ROWS
    per_row = -(-games // (2 * rows))
    out = []
    for seat in (0, 1):
        batch = duel_batch(rules, seat, seed + seat)
        results = np.full((rows, per_row), np.nan)
        done = np.zeros(rows, dtype=np.int64)
        while done.min() < per_row:
            actions = bot.act_ids(batch.obs, batch.mask)  # type: ignore[attr-defined]
            swap = substitute(variant, batch)
            if swap.any():
                actions = np.where(swap, batch.optimal_actions(), actions)
            batch.step(actions)
            for i in np.flatnonzero(batch.done):
                if done[i] < per_row:
                    results[i, done[i]] = (batch.rewards[i] + 1.0) / 2.0
                done[i] += 1
        out.append(results.ravel())
    values = np.concatenate(out)
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(values.size))


LEAD_BUCKETS = (
    ("below -1,000", -(10**9), -1000),
    ("-1,000 .. -50", -1000, 0),
    ("0 (a tie)", 0, 1),
    ("50 .. 450", 1, 500),
    ("500 and more", 500, 10**9),
)


def lead_table(bot: object, rules: object, games: int, seed: int) -> str:
    """Bank rates of the policy and the optimal bot in the policy's final-round bank-or-roll
    decisions, by lead bucket, over about ``games`` games from seat 0 (optimal moves not
    played)."""
    batch = duel_batch(rules, 0, seed)
    bank = ActionCatalog(rules).labels.index("bank")
    leads, policy_banks, optimal_banks = [], [], []
    finished = 0
    while finished < games:
        actions = bot.act_ids(batch.obs, batch.mask)  # type: ignore[attr-defined]
        S = batch.S
        pick = np.flatnonzero(substitute("final-round-bank-roll", batch))
        if pick.size:
            me = S[pick, K.C_PLAYER]
            leads.append(S[pick, K.B_SCORE + me] + S[pick, K.C_TOTAL] - S[pick, K.B_SCORE + 1 - me])
            policy_banks.append(actions[pick] == bank)
            optimal_banks.append(batch.optimal_actions()[pick] == bank)
        batch.step(actions)
        finished += int(batch.done.sum())
    lead, mine, best = (np.concatenate(x) for x in (leads, policy_banks, optimal_banks))
    lines = [
        f"final-round bank-or-roll decisions of {games:,} games (seat 0), by lead after banking",
        "| lead | decisions | policy banks | optimal banks | disagree |",
        "|---|---|---|---|---|",
    ]
    for label, lo, hi in LEAD_BUCKETS:
        m = (lead >= lo) & (lead < hi)
        if m.any():
            lines.append(
                f"| {label} | {int(m.sum()):,} | {mine[m].mean():.1%} | {best[m].mean():.1%} | "
                f"{(mine[m] != best[m]).mean():.1%} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot", help="a model file or registry id with a deterministic policy")
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--games", type=int, default=60_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--lead-table", action="store_true", help="final-round bank rates by lead instead")
    ns = ap.parse_args()
    rules = preset(ns.rules)
    bot = resolve_bot(ns.bot, rules, "duel")
    if ns.lead_table:
        print(lead_table(bot, rules, ns.games, ns.seed))
        return
    base = None
    print(f"{ns.bot} against optimal-duel, {ns.games:,} games per variant (seats balanced)")
    print("| optimal bot plays | win rate (95% CI) | gain |")
    print("|---|---|---|")
    for variant in ns.variants:
        mean, half = win_rate(bot, rules, variant, ns.games, ns.seed)
        base = mean if base is None else base
        print(f"| {variant} | {100 * mean:.2f}% ± {100 * half:.2f} | {100 * (mean - base):+.2f} |", flush=True)


if __name__ == "__main__":
    main()
