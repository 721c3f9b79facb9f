"""``greed solve`` and ``greed advise``: exact tables and move advice from them.

``greed solve --rules NAME --objective OBJ`` writes the table (to the user cache unless
``--out`` is given) and prints the headline number alone on its last line: expected points per
turn, probability of coming in, expected turns from 0, or the first player's win probability.

``greed advise`` shows every legal move of a position with its value under the objective.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from typing import Any

__all__ = ["register"]

OBJECTIVE_CHOICES = ("turn", "entry", "race", "duel")


def _rules(args: argparse.Namespace) -> Any:
    from greed_env.rules.config import RulesError, resolve_rules

    overrides: dict[str, str] = {}
    for item in args.set or []:
        if "=" not in item:
            raise RulesError(f"--set expects FIELD=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        overrides[key.strip()] = value.strip()
    return resolve_rules(args.rules, **overrides)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="ten_thousand", help="preset name (default ten_thousand)")
    p.add_argument(
        "--set", action="append", metavar="FIELD=VALUE", help="override a rules field (repeatable)"
    )
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, default="duel")


def register(subparsers: Any) -> None:
    """Add the ``solve`` and ``advise`` sub-commands."""
    p = subparsers.add_parser(
        "solve", help="solve an objective exactly and write the table",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(p)
    p.add_argument("--out", help="file (.npz) or directory to write (default: the user cache)")
    p.add_argument("--tol", type=float, default=1e-12, help="convergence tolerance")
    p.add_argument("--cap", type=int, help="turn objective: points where the tail policy starts")
    p.add_argument("--floor", type=int, help="race/duel with a bust penalty: lowest score modelled")
    p.add_argument(
        "--simulate",
        type=int,
        default=0,
        metavar="GAMES",
        help="duel: check the headline by GAMES games of the optimal bot against itself",
    )
    p.add_argument("--seed", type=int, default=0, help="dice seed of --simulate (default 0)")
    p.set_defaults(func=_solve)

    a = subparsers.add_parser(
        "advise", help="value every legal move of a position",
        description="Value every legal move of a position under a solved objective.",
    )
    _common(a)
    a.add_argument("--scores", default="0,0", help="banked scores, player to move first: A,B")
    a.add_argument("--turn-total", type=int, default=0, help="unbanked points of this turn")
    a.add_argument("--dice", type=int, help="dice to roll (or rolled), default: all")
    a.add_argument("--roll", help="the dice showing, e.g. 1,1,5,2,3,4 (omit: bank or roll)")
    a.add_argument("--streak", type=int, default=0, help="busts in a row of the player to move")
    a.add_argument("--entered", choices=("yes", "no"), help="player to move on the board?")
    a.add_argument(
        "--turns-left",
        type=int,
        help="a game of a fixed number of rounds: turns left counting this one (default: all)",
    )
    a.add_argument("--no-solve", action="store_true", help="fail instead of solving a missing table")
    a.set_defaults(func=_advise)


def _solve(args: argparse.Namespace) -> int:
    from greed_env.rules.config import RulesError
    from greed_env.solver import SolverError, solve
    from greed_env.solver.table import cache_dir

    try:
        rules = _rules(args)
        opts: dict[str, Any] = {"tol": args.tol}
        if args.cap is not None:
            opts["cap"] = args.cap
        if args.floor is not None:
            opts["floor"] = args.floor
        if args.simulate and (args.objective != "duel" or args.simulate < 2):
            raise SolverError("--simulate takes 2 or more games, with --objective duel")
        t0 = time.perf_counter()
        table = solve(rules, args.objective, **opts)
        elapsed = time.perf_counter() - t0
    except (RulesError, SolverError) as exc:
        print(f"greed solve: {exc}", file=sys.stderr)
        return 2
    path = table.save(args.out if args.out else cache_dir())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rules {rules.name} ({rules.fingerprint}), objective {args.objective}")
    print(f"{table.meta.get('headline_label', 'headline')}: {table.headline:.12g}")
    print(f"solved in {elapsed:.1f} s, peak memory {peak:.0f} MiB, written to {path}")
    if args.simulate:
        import numpy as np

        from greed_env.solver.simulate import simulate_duel

        print(simulate_duel(table, args.simulate, np.random.default_rng(args.seed)).summary())
    print(f"{table.headline:.12g}")
    return 0


def _advise(args: argparse.Namespace) -> int:
    from greed_env.rules.config import RulesError
    from greed_env.rules.game import Phase, new_game
    from greed_env.solver import OptimalBot, SolverError, TableError, load_table

    try:
        rules = _rules(args)
        table = load_table(rules, args.objective, solve_if_missing=not args.no_solve)
        scores = tuple(int(x) for x in args.scores.split(","))
        n_players = max(2, len(scores)) if args.objective == "duel" else max(rules.min_players, len(scores))
        scores = (scores + (0,) * n_players)[:n_players]
        state = new_game(rules, n_players, first_player=0)
        entered = tuple(
            (rules.entry_threshold == 0 or s > 0) for s in scores
        )
        if args.entered:
            entered = (args.entered == "yes", *entered[1:])
        dice = args.dice or rules.num_dice
        state = state._replace(
            scores=scores, entered=entered, streaks=(args.streak,) + (0,) * (n_players - 1),
            turn_total=args.turn_total, dice=dice, fresh=dice == rules.num_dice,
        )
        if args.turns_left is not None:
            total = rules.rounds * n_players
            if not rules.rounds:
                raise ValueError("--turns-left is for a game of a fixed number of rounds (--set rounds=N)")
            if not 1 <= args.turns_left <= total:
                raise ValueError(f"--turns-left must be 1..{total} (rounds x players), got {args.turns_left}")
            state = state._replace(rounds=total - args.turns_left)
        if args.roll:
            roll = tuple(sorted(int(x) for x in args.roll.replace(" ", "").split(",") if x))
            state = state._replace(phase=Phase.KEEP, roll=roll, dice=args.dice or len(roll),
                                   fresh=(args.dice or len(roll)) == rules.num_dice)
        elif args.turn_total > 0:
            state = state._replace(phase=Phase.CONTINUE)
        else:
            print(f"value at the start of this turn: {_start_value(table, rules, state):.6f}")
            print(f"table headline ({table.meta.get('headline_label', '')}): {table.headline:.6f}")
            return 0
        bot = OptimalBot(rules, args.objective, table)
        values = bot.move_values(rules, state)
    except (RulesError, SolverError, TableError, ValueError) as exc:
        print(f"greed advise: {exc}", file=sys.stderr)
        return 2
    if not values:
        print("no legal move: the roll busts")
        return 0
    sense = -1 if args.objective == "race" else 1
    best = max(range(len(values)), key=lambda i: (sense * values[i][1], -i))
    for i, (move, value) in enumerate(values):
        print(f"{'*' if i == best else ' '} {move!s:<20} {value:.6f}")
    return 0


def _start_value(table: Any, rules: Any, state: Any) -> float:
    """Value of the turn about to start for the player to move."""
    from greed_env.solver import OptimalBot

    return OptimalBot(rules, table.objective, table).turn_start_value(rules, state)
