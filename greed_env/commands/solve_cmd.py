"""``greed solve`` and ``greed advise``: exact tables and move advice from them.

``greed solve --rules NAME --objective OBJ`` writes the table (to the user cache unless
``--out`` is given) and prints the headline number alone on its last line: expected points per
turn, probability of coming in, expected turns from 0, or the first player's win probability.
With ``--address`` the levels of a race, duel or three-player table are solved on a Ray
cluster, each level checkpointed as it is done (the same table; a stopped solve goes on from
its last level when run again).

``greed advise`` shows every legal move of a position with its value under the objective.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

from greed_env.bots.hints import format_hints
from greed_env.cluster import ClusterError
from greed_env.commands.argtypes import (
    OutputPathError,
    add_address_option,
    check_output_dir,
    check_output_file,
    int_at_least,
    nonneg_int,
    positive_float,
    positive_int,
    seed_int,
)
from greed_env.files import name_problem
from greed_env.rules.config import RulesError, rules_from_args
from greed_env.rules.game import Phase, new_game

__all__ = ["register"]

OBJECTIVE_CHOICES = ("turn", "entry", "race", "duel", "3p")
MAX_TURN_TOTAL = 1_000_000
"""Largest ``advise --turn-total``: far past any turn a game sees (the in-turn arrays grow with
it)."""
MAX_SIMULATE = 10**8
"""Most games of ``solve --simulate`` (hours of play)."""


def _rules(args: argparse.Namespace) -> Any:
    """The rules of ``--rules`` and ``--set`` (:func:`rules_from_args`).

    Raises:
        RulesError: naming the problem (the ``--set`` at fault for a conflict).
    """
    return rules_from_args(args.rules, args.set)


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
    p.add_argument("--tol", type=positive_float, default=1e-12, help="convergence tolerance")
    p.add_argument("--cap", type=positive_int, help="turn objective: points where the tail policy starts")
    p.add_argument("--floor", type=int, help="race/duel with a bust penalty: lowest score modelled")
    p.add_argument(
        "--simulate",
        type=int_at_least(0, MAX_SIMULATE),
        default=0,
        metavar="GAMES",
        help="duel, 3p: check the headline by GAMES games of the optimal bot against itself",
    )
    p.add_argument("--seed", type=seed_int, default=0, help="dice seed of --simulate (default 0)")
    add_address_option(p, "levels of a race, duel or 3p table")
    p.add_argument(
        "--checkpoint",
        default=None,
        metavar="DIR",
        help="with --address: folder of the levels' checkpoints (default: checkpoints/ in the table cache)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="solve even when the estimate (shown when solving starts) is past the limits: more "
        "memory than this machine has, or more than a day",
    )
    p.set_defaults(func=_solve)

    a = subparsers.add_parser(
        "advise", help="value every legal move of a position",
        description="Value every legal move of a position under a solved objective.",
    )
    _common(a)
    a.add_argument("--scores", default="0,0", help="banked scores, player to move first: A,B")
    a.add_argument(
        "--turn-total", type=int_at_least(0, MAX_TURN_TOTAL), default=0, help="unbanked points of this turn"
    )
    a.add_argument("--dice", type=positive_int, help="dice to roll (or rolled), default: all")
    a.add_argument("--roll", help="the dice showing, e.g. 1,1,5,2,3,4 (omit: bank or roll)")
    a.add_argument("--streak", type=nonneg_int, default=0, help="busts in a row of the player to move")
    a.add_argument("--entered", choices=("yes", "no"), help="player to move on the board?")
    a.add_argument(
        "--turns-left",
        type=int,
        help="a game of a fixed number of rounds: turns left counting this one (default: all)",
    )
    a.add_argument("--no-solve", action="store_true", help="fail instead of solving a missing table")
    a.set_defaults(func=_advise)


def _check_out(out: str) -> None:
    """Refuse an ``--out`` that cannot take the table, before solving."""
    too_long = name_problem(out)
    if too_long:
        check_output_dir(out, "--out")  # raises, naming the flag and the length
    path = Path(out)
    if path.suffix.lower() == ".npz" and not path.is_dir():
        check_output_file(out, "--out", (".npz",))
        return
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"--out {out!r} is a file; give a folder or a file name ending in .npz")
    if path.suffix and not path.exists():
        raise OutputPathError(f"--out {out!r}: give a folder or a file name ending in .npz")
    check_output_dir(out, "--out")


def _solve(args: argparse.Namespace) -> int:
    from greed_env.solver import SolverError, TableError, not_converged, solve
    from greed_env.solver.table import cache_dir

    try:
        rules = _rules(args)
        if args.out:
            _check_out(args.out)
        else:
            try:
                check_output_dir(cache_dir(), "the table cache")
            except OutputPathError as exc:
                raise OutputPathError(f"{exc} (give --out, or set GREED_ENV_CACHE to a writable folder)") from None
        opts: dict[str, Any] = {"tol": args.tol}
        if args.cap is not None:
            if args.objective != "turn":
                raise SolverError(f"--cap applies to the turn objective, not {args.objective}")
            opts["cap"] = args.cap
        if args.floor is not None:
            if args.objective not in ("race", "duel") or not (rules.bust_penalty and rules.bust_penalty_after):
                raise SolverError("--floor applies to race and duel under rules with a bust penalty")
            if args.floor > 0:
                raise SolverError(f"--floor must be <= 0 points, got {args.floor}")
            opts["floor"] = args.floor
        if args.simulate and (args.objective not in ("duel", "3p") or args.simulate < 2):
            raise SolverError("--simulate takes 2 or more games, with --objective duel or 3p")
        if args.checkpoint is not None:
            if args.address is None:
                raise SolverError("--checkpoint keeps the levels of a solve on a cluster: give --address too")
            check_output_dir(args.checkpoint, "--checkpoint")
        t0 = time.perf_counter()
        try:
            table = solve(
                rules, args.objective, force=args.force, address=args.address, checkpoint=args.checkpoint, **opts
            )
        except KeyboardInterrupt:
            if args.address is not None:
                print("greed solve: the levels done are checkpointed; the same command goes on from there",
                      file=sys.stderr)
            raise
        elapsed = time.perf_counter() - t0
        path = table.save(args.out if args.out else cache_dir())
    except (RulesError, SolverError, TableError, OutputPathError, ClusterError) as exc:
        print(f"greed solve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"greed solve: cannot write the table: {exc.strerror or exc} ({exc.filename})", file=sys.stderr)
        return 2
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rules {rules.name} ({rules.fingerprint}), objective {args.objective}")
    print(f"{table.meta.get('headline_label', 'headline')}: {table.headline:.12g}")
    if args.objective == "turn" and rules.entry_threshold:
        print(f"(a player already on the board: the come-in threshold of {rules.entry_threshold:,} is not applied; "
              "--objective entry measures coming in)")
    why = not_converged(table)
    if why:
        print(f"warning: not the converged optimum ({why}); the bots and advise will not use it",
              file=sys.stderr)
    print(f"solved in {elapsed:.1f} s, peak memory {peak:.0f} MiB, written to {path}")
    if args.simulate:
        import numpy as np

        from greed_env.solver.simulate import simulate_duel
        from greed_env.solver.three_bot import simulate_three

        check = simulate_three if args.objective == "3p" else simulate_duel
        print(check(table, args.simulate, np.random.default_rng(args.seed)).summary())
    print(f"{table.headline:.12g}")
    return 0


def _position(args: argparse.Namespace, rules: Any) -> Any:
    """The position ``advise`` is asked about; refuses one the rules cannot reach.

    Raises:
        ValueError: naming the flag and the value.
    """

    try:
        scores = tuple(int(x) for x in args.scores.replace(" ", "").split(","))
    except ValueError:
        raise ValueError(f"--scores expects whole numbers A,B, got {args.scores!r}") from None
    seats = 2 if args.objective == "duel" else rules.max_players
    if not 1 <= len(scores) <= seats:
        raise ValueError(f"--scores gives {len(scores)} scores; the {args.objective} position has at most {seats}")
    low = -4 * rules.bust_penalty if rules.bust_penalty and rules.bust_penalty_after else 0
    for s in scores:
        if not low <= s < (rules.target or 10**12):
            where = "" if low == 0 else f" (down to {low} with the bust penalty)"
            raise ValueError(f"--scores {args.scores!r}: a banked score is 0..{rules.target - 1} "
                             f"in a game to {rules.target}{where}, got {s}")
    n_players = max(2, len(scores)) if args.objective == "duel" else max(rules.min_players, len(scores))
    scores = (scores + (0,) * n_players)[:n_players]
    if args.dice is not None and args.dice > rules.num_dice:
        raise ValueError(f"--dice {args.dice}: {rules.name} is played with {rules.num_dice} dice")
    limit = rules.bust_penalty_after - 1 if rules.bust_penalty and rules.bust_penalty_after else 0
    if args.streak > limit:
        why = (f"0..{limit} (bust number {rules.bust_penalty_after} in a row costs {rules.bust_penalty})"
               if limit else "0 (these rules have no bust penalty)")
        raise ValueError(f"--streak {args.streak}: busts in a row are {why}")
    roll: tuple[int, ...] = ()
    if args.roll is not None:
        faces = args.roll.replace(" ", "").split(",")
        if "" in faces:  # 1,,2 or a trailing comma: a face left out
            raise ValueError(f"--roll expects faces 1..6 like 1,1,5,2,3,4, one between each comma, got {args.roll!r}")
        try:
            roll = tuple(sorted(int(x) for x in faces))
        except ValueError:
            raise ValueError(f"--roll expects faces 1..6 like 1,1,5,2,3,4, got {args.roll!r}") from None
        if not roll or any(not 1 <= f <= 6 for f in roll):
            raise ValueError(f"--roll expects faces 1..6 like 1,1,5,2,3,4, got {args.roll!r}")
        if len(roll) > rules.num_dice:
            raise ValueError(f"--roll {args.roll!r}: {len(roll)} dice, {rules.name} is played with {rules.num_dice}")
        if args.dice is not None and args.dice != len(roll):
            raise ValueError(f"--dice {args.dice} but --roll shows {len(roll)} dice")
    state = new_game(rules, n_players, first_player=0)
    entered = tuple((rules.entry_threshold == 0 or s > 0) for s in scores)
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
    if roll:
        state = state._replace(phase=Phase.KEEP, roll=roll, dice=len(roll), fresh=len(roll) == rules.num_dice)
    elif args.turn_total > 0:
        state = state._replace(phase=Phase.CONTINUE)
    return state


def _advise(args: argparse.Namespace) -> int:
    from greed_env.solver import OptimalBot, SolverError, TableError, load_table

    try:
        rules = _rules(args)
        state = _position(args, rules)
        table = load_table(rules, args.objective, solve_if_missing=not args.no_solve, progress=sys.stderr)
        if not args.roll and args.turn_total == 0:
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

    sense = -1.0 if args.objective == "race" else 1.0
    ranked = sorted(values, key=lambda mv: -sense * float(mv[1]))  # stable: catalog order on ties
    for line in format_hints(args.objective, ranked, limit=len(ranked), title="advise"):
        print(line)
    return 0


def _start_value(table: Any, rules: Any, state: Any) -> float:
    """Value of the turn about to start for the player to move."""
    from greed_env.solver import OptimalBot

    return OptimalBot(rules, table.objective, table).turn_start_value(rules, state)
