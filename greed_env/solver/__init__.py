"""Exact solutions of the dice games: optimal play as a yardstick and as a bot.

Five objectives (see ``docs/solver.md`` and ``docs/three-player.md``):

* ``turn``: most expected points in one turn (long-run points per turn with a bust penalty);
* ``entry``: best probability of coming in within one turn;
* ``race``: fewest expected turns for one player to reach the target;
* ``duel``: best probability of winning a two-player game from every position (a game of a
  fixed number of rounds: by rounds left, :mod:`greed_env.solver.rounds`);
* ``3p``: a three-player game where each player maximises their own win probability, from
  every position (:mod:`greed_env.solver.three`).

Tables hold values at the start of a turn; decisions inside a turn are recomputed on demand.
All transition tables are derived from the reference scoring
(:func:`greed_env.rules.scoring.keep_options`).

>>> from greed_env.rules import preset
>>> round(solve(preset("farkle5"), "entry").headline, 4)
0.2986
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, TextIO

from greed_env import cluster, interrupts
from greed_env import progress as prog
from greed_env.rules.config import PRESETS, Rules, resolve_rules
from greed_env.solver import kernel_cache  # noqa: F401  (first: stamps the kernels' cache)
from greed_env.solver.model import SolverError, check_supported
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.solver.size import SolveTooBigError, check_size, estimate
from greed_env.solver.table import (
    OBJECTIVES,
    SolverTable,
    TableError,
    cache_dir,
    package_table_dir,
)

__all__ = [
    "LEVEL_OBJECTIVES",
    "OBJECTIVES",
    "OptimalBot",
    "SolveTooBigError",
    "SolverError",
    "SolverTable",
    "TableError",
    "load_table",
    "not_converged",
    "options_key",
    "solve",
    "solve_command",
    "table_paths",
]


LEVEL_OBJECTIVES = ("race", "duel", "3p")
"""The objectives solved level by level, which a Ray cluster can share (``address``)."""


def solve(
    rules: Rules | str,
    objective: str,
    progress: TextIO | None = None,
    force: bool = False,
    address: str | None = None,
    checkpoint: str | Path | None = None,
    **opts: Any,
) -> SolverTable:
    """Solve ``objective`` under ``rules`` (a :class:`Rules` or a preset name).

    ``progress``: a stream on which a bar with the time left is drawn while solving
    (:func:`greed_env.progress.showing`; default: the stream of
    :func:`greed_env.progress.report_to`, which the ``greed`` command sets to standard error;
    None there: silent). Its first line gives the estimate of
    :func:`greed_env.solver.size.estimate` (positions, memory, time).

    Options: ``tol`` (convergence tolerance, default 1e-12), ``cap`` (turn objective: points
    where the tail policy starts; chosen and checked automatically by default), ``floor``
    (race/duel with a bust penalty: lowest banked score modelled, in points). Carry-over rules
    take ``max_states`` (memory guard of the carry-over engine). A solve estimated past the
    limits of :func:`greed_env.solver.size.check_size` (the machine's memory, a day) is refused
    before it starts unless ``force``.

    The solve is a deferred region of :mod:`greed_env.interrupts`: under the ``greed``
    command's signal handling (:mod:`greed_env.commands.signals`) Ctrl-C is raised between its
    passes, or the process ends within seconds when a compiled pass holds it.

    ``address``: solve the levels of a :data:`LEVEL_OBJECTIVES` objective on the Ray cluster
    there (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``;
    :mod:`greed_env.solver.distributed`): the same table. Each level's values are checkpointed
    under ``checkpoint`` (default: ``checkpoints`` in the table cache) as it is done, so the
    same call after a stop goes on from there.

    Raises:
        SolverError: unknown objective, or a rule variant or size the solver does not handle;
            with ``address``, an objective or variant not solved level by level.
        SolveTooBigError: (a SolverError) the estimate is past the limits and not ``force``.
        ClusterError: (a RuntimeError) ``address`` given, and no Ray or no cluster there.
    """
    rules = resolve_rules(rules)
    if objective not in OBJECTIVES:
        raise SolverError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
    key = options_key(opts)
    if objective == "3p":
        from greed_env.solver.three import check_three_supported

        check_three_supported(rules)
    else:
        check_supported(rules, objective)
    if address is not None and objective not in LEVEL_OBJECTIVES:
        raise SolverError(
            f"a cluster solves the objectives solved level by level ({', '.join(LEVEL_OBJECTIVES)}); "
            f"{objective} is one turn's passes: solve it without --address"
        )
    size = estimate(rules, objective, **opts)
    if not force:
        try:
            check_size(size, rules)
        except SolveTooBigError as exc:
            raise SolveTooBigError(
                f"{exc}; `{solve_command(rules, objective, key)} --force` solves it anyway", exc.size
            ) from None
    prog.begin()
    stream = progress if progress is not None else prog.default_stream()
    title = f"solving the {objective} table for {rules.name} ({rules.fingerprint})"
    try:
        with cluster.connected(address), interrupts.deferred(), (
            contextlib.nullcontext() if stream is None else prog.showing(title, stream, about=size.describe())
        ):
            levels = None
            if address is not None:
                from greed_env.solver.distributed import ClusterLevels

                levels = ClusterLevels(Path(checkpoint) if checkpoint is not None else cache_dir() / "checkpoints")
            table = _solve(rules, objective, key, opts, levels)
            prog.finish()
    finally:
        prog.end()
    return table


def _solve(
    rules: Rules, objective: str, key: dict[str, Any], opts: dict[str, Any], levels: Any = None
) -> SolverTable:
    if objective == "3p":
        from greed_env.solver import three

        extra = sorted(set(opts) - {"tol"})
        if extra:
            raise SolverError(f"the three-player solver takes no {', '.join(extra)} option")
        table = three.solve_three(rules, levels=levels, **opts)
    elif rules.carry_over:
        from greed_env.solver import carry

        table = carry.solve(rules, objective, levels=levels, **opts)
    elif objective == "duel" and rules.rounds:
        from greed_env.solver import rounds

        table = rounds.solve_rounds_duel(rules, levels=levels, **opts)
    else:
        from greed_env.solver import objectives

        fn = {
            "turn": objectives.solve_turn,
            "entry": objectives.solve_entry,
            "race": objectives.solve_race,
            "duel": objectives.solve_duel,
        }[objective]
        table = fn(rules, **opts) if levels is None else fn(rules, levels=levels, **opts)
    if key:
        table.meta["solve_options"] = key
    return table


def options_key(opts: dict[str, Any]) -> dict[str, Any]:
    """Check the solver options and return those that change values away from the defaults.

    ``tol`` must be a finite number > 0, ``cap`` a whole number of points >= 1, ``floor`` a
    whole number of points <= 0, ``max_states`` (a memory guard, no effect on values) >= 1.
    The returned dict keys the table's file name, so a table solved with a cap or tolerance
    of one's own never stands in for the default, converged one.

    Raises:
        SolverError: an unknown option or a value out of range, naming the option.
    """
    import math

    from greed_env.solver.objectives import DEFAULT_TOL

    key: dict[str, Any] = {}
    for name, value in opts.items():
        if name == "tol":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise SolverError(f"tol must be a finite number > 0, got {value!r}")
            if value != DEFAULT_TOL:
                key["tol"] = float(value)
        elif name in ("cap", "max_states"):
            if value is None and name == "cap":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SolverError(f"{name} must be a whole number >= 1, got {value!r}")
            if name == "cap":
                key["cap"] = value
        elif name == "floor":
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value > 0:
                raise SolverError(f"floor must be a whole number of points <= 0, got {value!r}")
            key["floor"] = value
        else:
            raise SolverError(f"unknown solver option {name!r}; known: tol, cap, floor, max_states")
    return key


def not_converged(table: SolverTable) -> str:
    """Why ``table`` is not the converged optimum ('' when it is, as far as its metadata says)."""
    meta = table.meta
    rules = table.rules
    if (table.objective == "turn" and rules.carry_over and rules.exact_target
            and "points_per_turn_target_ignored" not in meta):
        return "it was solved with the exact target ignored, which overstates the turn the game plays"
    if meta.get("tail_policy_below_cap") is False:
        return (
            f"its cap of {meta.get('cap_points')} points is below where the tail policy starts"
        )
    change = meta.get("cap_change_when_doubled")
    tol = meta.get("tolerance")
    if change is not None and tol is not None and float(change) > float(tol):
        return f"doubling its cap changes the value by {float(change):.3g} (> tolerance {float(tol):.3g})"
    return ""


def table_paths(rules: Rules, objective: str, **opts: Any) -> list[Any]:
    """Where :func:`load_table` looks, in order: package data, then the user cache.

    Options that change values (``cap``, ``floor``, a ``tol`` other than the default) are part
    of the file name, so without them only the default, converged table is found.
    """
    key = options_key(opts)
    name = SolverTable(rules, objective, {}, {"solve_options": key} if key else {}).filename()
    return [package_table_dir() / name, cache_dir() / name]


def solve_command(rules: Rules, objective: str, key: dict[str, Any] | None = None) -> str:
    """The ``greed solve`` command line that writes the table :func:`load_table` looks for
    (with ``--set`` for every field that differs from the preset of the same name)."""
    words = ["greed", "solve", "--rules", rules.name]
    base = PRESETS.get(rules.name)
    if base is not None:
        mine, theirs = rules.to_dict(), base.to_dict()
        for field_name, value in mine.items():
            if value != theirs.get(field_name):
                text = json.dumps(value).replace(" ", "") if not isinstance(value, str) else value
                words.append(f"--set {field_name}={text}")
    words += ["--objective", objective]
    for name, value in (key or {}).items():
        words.append(f"--{name} {value}")
    return " ".join(words)


def _recovery(path: Any, rules: Rules, objective: str, key: dict[str, Any]) -> str:
    """How to get a usable table in place of the unusable file ``path``."""
    if path.parent == package_table_dir():
        return "the installed package is damaged: reinstall greed-env (pip install --force-reinstall greed-env)"
    return f"delete it (rm {path}) and run `{solve_command(rules, objective, key)}` to solve it again"


def load_table(
    rules: Rules | str,
    objective: str,
    solve_if_missing: bool = True,
    progress: TextIO | None = None,
    **opts: Any,
) -> SolverTable:
    """The table of ``objective`` under ``rules``: shipped package data, then the user cache,
    else solved now and written to the cache (``solve_if_missing=False``: raise instead).

    ``opts`` are solver options (``cap``, ``floor``, ``tol``); the default lookup finds only
    tables solved without them and refuses one whose metadata says it did not converge. With
    ``progress`` (a stream, e.g. ``sys.stderr``; default that of
    :func:`greed_env.progress.report_to`) a table solved now draws its progress there.

    Raises:
        TableError: a file exists but is corrupt, for other rules or options, or not
            converged (never silently replaced; the message says which file to delete and the
            ``greed solve`` command that writes it again), or no table exists and
            ``solve_if_missing`` is False.
        SolverError: an option out of range, or rules the solver does not model.
    """
    rules = resolve_rules(rules)
    key = options_key(opts)
    for path in table_paths(rules, objective, **opts):
        if path.exists():
            try:
                table = SolverTable.load(path, rules, objective)
            except TableError as exc:
                raise TableError(f"{exc}; {_recovery(path, rules, objective, key)}") from None
            stored = table.meta.get("solve_options") or {}
            if stored != key:
                raise TableError(
                    f"{path}: solved with options {stored or 'none'}, not {key or 'the defaults'}; "
                    f"delete it and run `{solve_command(rules, objective, key)}`"
                )
            why = not_converged(table)
            if why and not key:
                raise TableError(
                    f"{path}: not the converged optimum ({why}); delete it and run "
                    f"`{solve_command(rules, objective)}`"
                )
            return table
    if solve_if_missing and objective == "3p":
        from greed_env.solver.three import check_on_demand

        check_on_demand(rules)
    if not solve_if_missing:
        raise TableError(
            f"no {objective} table for rules {rules.name!r} ({rules.fingerprint}); run "
            f"`{solve_command(rules, objective, key)}`"
        )
    table = solve(rules, objective, progress, **opts)
    table.save(cache_dir())
    return table
