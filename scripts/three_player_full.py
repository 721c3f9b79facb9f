"""The full game (ten_thousand to 10,000) against its exact three-player equilibrium.

Needs the full-size ``3p`` table, solved offline (``greed solve --rules ten_thousand --objective
3p``, about an hour of CPU: 3,868 CPU-s measured; docs/three-player.md) into the user cache or ``$GREED_ENV_CACHE``.
Then, with the protocol of ``ten_thousand/ffa3-exact-v1`` (2,000 games, seed 2026, the bot's
seat rotated, the regret estimate beside the share) but the rule book's own target, so the
trained bots play the game they were trained for:

    python scripts/three_player_full.py --simulate 20000 --json full.json
    python scripts/three_player_full.py --bots leader-duel ten_thousand/ppo-duel --games 2000

``--simulate N`` first plays N games of three ``optimal-3p`` bots and compares seat 0's share
with the table's headline (z-score).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

import numpy as np

from greed_env.benchmark import get_task, run_task
from greed_env.files import atomic_write_text
from greed_env.rules import preset
from greed_env.solver.three import load_three_table
from greed_env.solver.three_bot import simulate_three

BOTS = (
    "optimal-3p", "leader-duel", "ten_thousand/ppo-duel", "ten_thousand/ppo-turn",
    "ten_thousand/rllib-selfplay", "threshold-300",
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", nargs="*", default=list(BOTS))
    p.add_argument("--games", type=int, default=2_000)
    p.add_argument("--simulate", type=int, default=0, metavar="GAMES")
    p.add_argument("--seed", type=int, default=20260, help="dice seed of --simulate")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--target", type=int, default=10_000, help="a smaller game (its table solved or shipped)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    rules = preset("ten_thousand", target=args.target)
    table = load_three_table(rules)  # refuses in one line when the offline table is missing
    out: dict[str, Any] = {"headline": table.headline, "start_values": table.meta["start_values"], "bots": {}}
    if args.simulate:
        c0 = time.process_time()
        check = simulate_three(table, args.simulate, np.random.default_rng(args.seed))
        out["simulation"] = {**check._asdict(), "cpu_s": round(time.process_time() - c0, 1)}
        print(check.summary(), f"(table {table.headline:.6f})", flush=True)
    task = dataclasses.replace(get_task("ten_thousand/ffa3-exact"), name="ten_thousand/ffa3-exact-full",
                               games=args.games, overrides=(("target", args.target),) if args.target != 10_000 else ())
    for bot in args.bots:
        r = run_task(task, bot, workers=args.workers)
        e = r.extra
        out["bots"][bot] = {"share": r.value, "ci95": r.ci95, **e, "wall_s": r.wall_s}
        print(f"{bot}: share {100 * r.value:.2f} ± {100 * r.ci95:.2f}%, regret estimate "
              f"{100 * e['regret_estimate']:.2f} ± {100 * e['regret_estimate_ci95']:.2f}% "
              f"(seat value {100 * e['seat_value']:.2f}%), regret per decision "
              f"{e['mean_regret_per_decision']:.2e}", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
