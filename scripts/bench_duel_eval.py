"""Speed of a duel evaluation against the optimal bot: numba engine against Python envs.

``greed eval --objective duel`` plays a deterministic policy against ``optimal-duel``. The
Python path steps ``Duel-v0`` environments whose opponent is the reference
:class:`~greed_env.solver.optimal_bot.OptimalBot` (one in-turn pass per turn context, in Python); the
vector path (:func:`greed_env.evaluation.vector_duel_values`) steps batches of games in numba
with the optimal policy read from :mod:`greed_env.vector.optimal`'s arrays. Both are timed in
one run on the same bot, with games per second of wall-clock and of process CPU time (median
of ``--repeats``), and the ratio of the two; the one-off cost of building the arrays is
printed apart (it is paid once per process).

    python scripts/bench_duel_eval.py --rules ten_thousand --bot optimal --repeats 3

``--bot`` is any ``greed eval`` bot: ``optimal`` (the optimal duel bot against itself), a
model file or a registry id such as ``ten_thousand/ppo-turn``. ``docs/scale.md`` holds the
figures and the command that produced them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from greed_env.evaluation import evaluate, resolve_bot, vector_duel_values
from greed_env.rules import preset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--bot", default="optimal")
    ap.add_argument("--python-games", type=int, default=200)
    ap.add_argument("--vector-games", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rules = preset(args.rules)
    bot = resolve_bot(args.bot, rules, "duel")
    opponent = resolve_bot("optimal", rules, "duel")
    t0 = time.perf_counter()
    vector_duel_values(bot, opponent, rules, 2, args.seed)  # builds the arrays, compiles
    setup = time.perf_counter() - t0
    print(f"rules {args.rules}, bot {args.bot}, load average {os.getloadavg()[0]:.1f}")
    print(f"one-off: optimal arrays and kernels ready in {setup:.1f} s")
    rates: dict[str, tuple[float, float]] = {}
    for label, games, run in (
        ("python envs", args.python_games,
         lambda n: evaluate(bot, rules, "duel", episodes=n, seed=args.seed, regret_episodes=0, vector=False)),
        ("numba engine", args.vector_games,
         lambda n: vector_duel_values(bot, opponent, rules, n, args.seed)),
    ):  # fmt: skip
        walls, cpus = [], []
        for _ in range(args.repeats):
            w, c = time.perf_counter(), time.process_time()
            run(games)
            walls.append(games / (time.perf_counter() - w))
            cpus.append(games / max(time.process_time() - c, 1e-9))
        rates[label] = (statistics.median(walls), statistics.median(cpus))
        print(f"{label:>13}: {games:>7,} games, {rates[label][0]:>9,.1f} games/s wall, "
              f"{rates[label][1]:>9,.1f} games/CPU-s (median of {args.repeats})")
    ratio = rates["numba engine"][0] / rates["python envs"][0]
    ratio_cpu = rates["numba engine"][1] / rates["python envs"][1]
    print(f"numba / python: {ratio:,.0f}x by wall time, {ratio_cpu:,.0f}x by CPU time; "
          f"100,000 games: {100_000 / rates['numba engine'][0]:.0f} s in numba, "
          f"{100_000 / rates['python envs'][0] / 60:.0f} min in Python")


if __name__ == "__main__":
    main()
