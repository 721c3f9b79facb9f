"""The three-player game solved exactly: objective ``3p``.

Each of three players maximises their own probability of winning (a shared win counts
``1/k``). A position at the start of a turn is worth a vector ``V[a, b, c, k]``: the value to
the ``k``-th player in turn order (0 the player to move at ``a``, 1 the next at ``b``, 2 the one
after at ``c``), scores in units (0 = not on the board when there is an entry threshold); the
table stores it over the scores a player can hold (``scores``: 0 and the threshold up) as
``win3`` and :func:`three_values` spreads it over every score below the target. The
headline is the first player's win probability at the start, ``V[0, 0, 0, 0]``.

Method (``docs/three-player.md``): backward induction over levels of score sum ``a + b + c``
(a bank raises it; a bust passes the turn with the scores unchanged, so each level's positions
fall into cycles of three rotations, each solved by policy iteration; a cycle where no
profile of pure policies is an equilibrium gets a mixed one from
:mod:`greed_env.solver.three_mixed`), the final round (the two others' last turns after a
player banks the target) valued by the points each still needs, and one documented tie-break
(``tie``) where moves are equally good for the mover.

>>> from greed_env.rules import preset
>>> t = solve_three(preset("ten_thousand", target=1000))
>>> [round(float(x), 4) for x in three_values(t)[0, 0, 0]]
[0.3968, 0.3245, 0.2788]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from greed_env.interrupts import check as check_interrupt
from greed_env.progress import counter
from greed_env.rules.config import Rules
from greed_env.solver import three_kernels as k3
from greed_env.solver.model import RollTables, SolverError, check_supported, roll_tables
from greed_env.solver.objectives import DEFAULT_TOL, cap_eps
from greed_env.solver.table import SolverTable, TableError
from greed_env.solver.three_mixed import SELECTIONS, CycleContext, MixedTurn, mixed_cycle

__all__ = [
    "OBJECTIVE",
    "ON_DEMAND_UNITS",
    "TIE_BREAKS",
    "check_on_demand",
    "check_three_supported",
    "final_round_tables",
    "level_cost",
    "load_three_table",
    "solve_three",
    "three_cost",
    "three_unavailable",
    "three_values",
]

OBJECTIVE = "3p"
TIE_BREAKS = ("bank-fewest", "roll-most")
"""Where moves are equally good for the mover: ``bank-fewest`` (the default) banks rather than
rolls and keeps the fewest dice, then the fewest points; ``roll-most`` rolls rather than banks
and keeps the most dice, then the most points."""

ON_DEMAND_UNITS = 100
"""Largest target (in units of the rules) solved on demand by a bot or a task; larger ones
(ten_thousand's own 10,000 is 200 units: hours of CPU) are solved by ``greed solve`` alone."""

_MAX_ITER = 24
_LAST_TAIL = 1e-18  # the last turn's chance to gain more than its table holds, read as 0
_STEPS_PER_CYCLE = 2.8  # policy-iteration steps per cycle (2.7-3.0 measured), for estimates only
_MARGIN_SHARE = 0.45  # mean cap past the target over the best keep (ten_thousand: ~72 of 160 units)


def check_three_supported(rules: Rules) -> None:
    """Raise :class:`SolverError` naming what the three-player solver does not model.

    Modelled: rules without carry-over, a reroll-all, a bust penalty, a fixed number of rounds,
    an exact target or a minimum bank, played by three, with shared ties (the final round as
    the rule book has it, or none: the first to bank the target wins).
    """
    check_supported(rules)
    bad = []
    if not rules.min_players <= 3 <= rules.max_players:
        bad.append(f"{rules.name} with three players ({rules.min_players}-{rules.max_players} play it)")
    for name, on in (
        ("carry_over", rules.carry_over),
        ("reroll_all", rules.reroll_all),
        ("bust_penalty", bool(rules.bust_penalty and rules.bust_penalty_after)),
        ("rounds", bool(rules.rounds)),
        ("exact_target", rules.exact_target),
        ("min_bank", bool(rules.min_bank)),
    ):
        if on:
            bad.append(f"{name}={getattr(rules, name)!r}")
    if rules.tie_rule != "shared":
        bad.append(f"tie_rule={rules.tie_rule!r}")
    if rules.target <= 0:
        bad.append("a game without a target")
    if bad:
        raise SolverError("the three-player solver does not model " + ", ".join(bad))


def _scores(target: int, thr: int) -> np.ndarray:
    """The banked scores a player can hold (units): 0, and from the threshold up to the target."""
    return np.array([0, *range(max(thr, 1), target)] if thr > 0 else range(target), dtype=np.int64)


def three_values(table: SolverTable) -> np.ndarray:
    """``V[a, b, c, k]`` of a ``3p`` table over every score below the target (units; zeros at
    scores no player can hold)."""
    scores = table.arrays["scores"]
    target = -(-table.rules.target // int(table.meta["unit"]))
    v = np.zeros((target, target, target, 3))
    v[np.ix_(scores, scores, scores)] = table.arrays["win3"]
    return v


def _on_demand(rules: Rules) -> bool:
    """Whether a missing table of ``rules`` may be solved on demand (minutes at most)."""
    return -(-rules.target // roll_tables(rules, True).unit) <= ON_DEMAND_UNITS


def _offline_note(rules: Rules) -> str:
    from greed_env.solver import solve_command

    return (f"no three-player table for {rules.name} at target {rules.target:,} (solving it takes hours: "
            f"see docs/three-player.md); run `{solve_command(rules, OBJECTIVE)}` offline first")


def three_unavailable(rules: Rules) -> str:
    """Why there is no ``optimal-3p`` bot for ``rules``, or "" when there is (cheap: a table is
    on disk, or the target is small enough to solve on demand)."""
    from greed_env.solver import table_paths

    try:
        check_three_supported(rules)
    except SolverError as exc:
        return str(exc)
    if _on_demand(rules) or any(p.exists() for p in table_paths(rules, OBJECTIVE)):
        return ""
    return _offline_note(rules)


def check_on_demand(rules: Rules) -> None:
    """Raise :class:`TableError` (naming the offline ``greed solve`` command) when a missing
    ``3p`` table of ``rules`` is too large to solve on demand."""
    if not _on_demand(rules):
        raise TableError(_offline_note(rules))


def load_three_table(rules: Rules) -> SolverTable:
    """The ``3p`` table of ``rules``: package data, the user cache, else solved now and cached,
    if the target is at most :data:`ON_DEMAND_UNITS` units.

    Raises:
        TableError: no table on disk and the target too large to solve on demand (the message
            names the ``greed solve`` command to run offline), or a table that does not load.
    """
    from greed_env.solver import load_table

    return load_table(rules, OBJECTIVE)


def _units(rules: Rules, tb: RollTables) -> tuple[int, int]:
    return -(-rules.target // tb.unit), -(-rules.entry_threshold // tb.unit)


def three_cost(rules: Rules) -> float:
    """Estimated in-turn rows of a solve: the sum of :func:`level_cost`, in closed form (any
    target at once: a cycle's turn starts are its rotations, so the levels hold every ordered
    triple of scores once, and the pass of the mover at ``a`` is met ``N**2`` times over ``N``
    scores). :func:`solve_three` counts the real rows (``meta["rows"]``);
    ``docs/three-player.md`` turns rows into CPU time."""
    tb = roll_tables(rules, True)
    target, thr = _units(rules, tb)
    mb = max(-(-rules.min_bank // tb.unit), 1)
    margin = _MARGIN_SHARE * tb.max_keep if rules.final_round else 0.0
    k = max(target - max(thr, 1), 0)  # scores 1.. held by a player: target - k .. target - 1
    above = k * (k + 1) // 2 - mb * (mb + 1) // 2 if k > mb else 0
    rows = max(target, thr if thr > mb else mb) + 1 + k + mb * min(k, mb) + above  # sum over scores
    n = k + 1
    return float(n * n * rows + margin * n**3) * _STEPS_PER_CYCLE


def level_cost(rules: Rules) -> np.ndarray:
    """Estimated in-turn rows of each level of score sum (index: the sum in units): every turn
    start's pass, from its own score to the target plus the cap past it (with a final round:
    :data:`_MARGIN_SHARE` of the best keep on average), times the policy-iteration steps per
    cycle. What a level costs is what one machine of a cluster would be handed at once.

    A level's turn starts are the ordered triples of scores summing to it, so the rows are
    convolutions over the scores (quadratic in the target: ten_thousand's 200 units at once)."""
    rows, valid, margin = _start_rows(rules)
    pairs = np.convolve(valid, valid)
    return (np.convolve(rows, pairs) + margin * np.convolve(valid, pairs)) * _STEPS_PER_CYCLE


def _start_rows(rules: Rules) -> tuple[np.ndarray, np.ndarray, float]:
    """Per score in units: the rows of a turn start's pass by the mover there (0 at scores no
    player holds), whether a player can hold it, and the mean margin past the target."""
    tb = roll_tables(rules, True)
    target, thr = _units(rules, tb)
    mb = max(-(-rules.min_bank // tb.unit), 1)
    scores = np.arange(target)
    valid = ((scores == 0) | (scores >= thr)).astype(float)
    need = np.where((scores == 0) & (thr > mb), thr, mb)
    rows = (np.maximum(target - scores, need) + 1) * valid
    margin = _MARGIN_SHARE * tb.max_keep if rules.final_round else 0.0
    return rows, valid, margin


def final_round_tables(rules: Rules, tb: RollTables, y_max: int, tie: int) -> dict[str, np.ndarray]:
    """The last player's tables (``eq2, gt2`` with one player on the best score, ``eq3, gt3``
    with two, by points needed, doubled from ``6 * target + max_keep`` until the chance to gain
    more is below 1e-18) and the final-round table
    ``fin[k, y_b, y_c]`` up to ``y_max`` (see :mod:`greed_env.solver.three_kernels`)."""
    target, _thr = _units(rules, tb)
    tab = tb.kernel_tables()
    p_min = float(min(tb.p_bust[1:]))
    y_last = max(6 * target, y_max) + tb.max_keep
    while True:
        check_interrupt()
        eq2, gt2 = k3.last_turn_tables(y_last, tab, 0.5, tie)
        if eq2[-1] + gt2[-1] <= _LAST_TAIL:
            break
        if y_last > 1_000 * target + tb.max_keep:
            raise SolverError(f"the last turn's table does not reach its end ({eq2[-1] + gt2[-1]:.3g} left)")
        y_last *= 2
    eq3, gt3 = k3.last_turn_tables(y_last, tab, 1.0 / 3.0, tie)
    fin = k3.final_round_table(y_max, tab, p_min, eq2, gt2, eq3, gt3, tie)
    return {"last_eq2": eq2, "last_gt2": gt2, "last_eq3": eq3, "last_gt3": gt3, "fin": fin}


def solve_three(
    rules: Rules,
    tol: float = DEFAULT_TOL,
    tie: str = "bank-fewest",
    on_level: Callable[[int, int, float, float], None] | None = None,
    select: str = "first",
    levels: Any = None,
) -> SolverTable:
    """Solve the three-player game under ``rules`` (see the module docstring).

    Args:
        rules: the rules (checked by :func:`check_three_supported`).
        tol: policy iteration stops when a step changes no value by more than this.
        tie: the tie-break, one of :data:`TIE_BREAKS`.
        select: which equilibrium of a cycle with several (only where movers mix), one of
            :data:`~greed_env.solver.three_mixed.SELECTIONS`.
        on_level: called after each level with ``(level, cycles, rows, seconds)``.
        levels: where the levels run (:class:`greed_env.solver.distributed.ClusterLevels`: a
            Ray cluster); None: here.

    A cycle whose policy iteration does not settle within its step limit has no equilibrium
    in pure policies: :func:`~greed_env.solver.three_mixed.mixed_cycle` finds one where movers
    mix two policies (``mix_state``, ``mix_prob``, ``mix_x`` in the table).

    Raises:
        SolverError: unsupported rules, an unknown tie-break, or a cycle without an equilibrium
            among the policies tried.
    """
    check_three_supported(rules)
    if select not in SELECTIONS:
        raise SolverError(f"unknown equilibrium selection {select!r}; known: {', '.join(SELECTIONS)}")
    if tie not in TIE_BREAKS:
        raise SolverError(f"unknown tie-break {tie!r}; known: {', '.join(TIE_BREAKS)}")
    t0 = time.perf_counter()
    tb = roll_tables(rules, True)
    tab = tb.kernel_tables()
    target, thr = _units(rules, tb)
    mb = -(-rules.min_bank // tb.unit)
    tie_code = TIE_BREAKS.index(tie)
    p_min = float(min(tb.p_bust[1:]))
    eps = cap_eps(tol)
    y_max = target + 3 * tb.max_keep  # room for caps up to twice the best keep past the target
    while True:
        arrays: dict[str, np.ndarray] = {}
        if rules.final_round:
            arrays = final_round_tables(rules, tb, y_max, tie_code)
            fin = arrays["fin"]
        else:
            fin = np.zeros((3, 1, 1))
        run_levels = _levels if levels is None else levels.three
        v, iters, margins, certified, rows, seconds, mixed, resolved = run_levels(
            rules, tb, target, thr, mb, fin, p_min, eps, tab, tol, tie_code, on_level, select
        )
        if rules.final_round and not certified.all() and y_max < 40 * target:
            y_max *= 2  # a cap met the end of the final-round table
            continue
        break
    start = [float(x) for x in v[0, 0, 0]]
    solved = (iters > 0) & (iters <= _MAX_ITER)
    meta: dict[str, Any] = {
        "unit": tb.unit,
        "tolerance": tol,
        "tie_break": tie,
        "equilibrium_selection": select,
        "headline": start[0],
        "headline_label": "first player's win probability at the start (three players)",
        "start_values": start,
        "p_min_bust": p_min,
        "full_tables": True,
        "turn_starts": int((iters > 0).sum()),
        "rows": rows,
        "max_iterations": int(iters[solved].max()),
        "mean_iterations": float(iters[solved].mean()),
        "mixed_cycles": resolved,
        "mixed_turn_starts": len(mixed),
        "level_seconds": seconds,
        "elapsed_s": time.perf_counter() - t0,
    }
    if rules.final_round:
        meta.update(
            max_margin_points=int(margins.max()) * tb.unit,
            cap_certified=bool(certified.all()),
            final_round_size=int(y_max),
        )
        del arrays["fin"]  # derived again from the last turn's tables where needed
    scores = _scores(target, thr)
    arrays["scores"] = scores
    arrays["win3"] = np.ascontiguousarray(v[np.ix_(scores, scores, scores)])
    arrays["mix_state"] = np.array([m.state for m in mixed], dtype=np.int64).reshape(-1, 3)
    arrays["mix_prob"] = np.array([m.prob for m in mixed], dtype=float)
    arrays["mix_x"] = np.array([(m.x_low, m.x_high) for m in mixed], dtype=float).reshape(-1, 2)
    return SolverTable(rules, OBJECTIVE, arrays, meta)


def _levels(
    rules: Rules, tb: RollTables, target: int, thr: int, mb: int, fin: np.ndarray, p_min: float, eps: float,
    tab: tuple, tol: float, tie_code: int, on_level: Callable[[int, int, float, float], None] | None,
    select: str = "first",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, list[float], list[MixedTurn], int]:
    """Every level from the top down; returns the tables, the rows run, seconds per level, the
    turn starts whose mover mixes and the number of cycles that needed :func:`mixed_cycle`."""
    v = np.zeros((target, target, target, 3))
    iters = np.zeros((target, target, target), dtype=np.int64)
    margins = np.zeros((target, target, target), dtype=np.int64)
    certified = np.ones((target, target, target), dtype=np.bool_)
    ctx = CycleContext(target, thr, mb, rules.final_round, fin, p_min, eps, tab, tie_code)
    prog = counter()
    prog[0] = 0.0
    prog[1] = three_cost(rules)
    rows = 0.0
    seconds = [0.0] * (3 * target - 2)
    mixed: list[MixedTurn] = []
    resolved = 0
    for level in range(3 * (target - 1), -1, -1):
        check_interrupt()  # a safe point between levels: Ctrl-C ends the solve here
        cycles = k3.level_cycles(level, target, thr)
        if cycles.shape[0] == 0:
            continue
        t1 = time.perf_counter()
        done = k3.solve_level(
            cycles, v, iters, margins, certified, target, thr, mb, rules.final_round, fin, p_min, eps, tab,
            tol, _MAX_ITER, tie_code,
        )
        for a, b, c in cycles[iters[cycles[:, 0], cycles[:, 1], cycles[:, 2]] < 0]:
            resolved += 1
            mixed += _resolve(ctx, v, iters, margins, certified, int(a), int(b), int(c), select)
        dt = time.perf_counter() - t1
        seconds[level] = round(dt, 4)
        rows += done
        prog[0] = min(rows, prog[1])
        if on_level is not None:
            on_level(level, int(cycles.shape[0]), done, dt)
    prog[0] = prog[1]
    return v, iters, margins, certified, rows, seconds, mixed, resolved


def _resolve(
    ctx: CycleContext, v: np.ndarray, iters: np.ndarray, margins: np.ndarray, certified: np.ndarray,
    a: int, b: int, c: int, select: str = "first",
) -> list[MixedTurn]:
    """A cycle where policy iteration did not settle: its equilibrium with mixed policies
    (:func:`greed_env.solver.three_mixed.mixed_cycle`), written into the tables."""
    states = [(a, b, c), (b, c, a), (c, a, b)]
    start = [float(v[states[(i + 1) % 3]][2]) for i in range(3)]
    w, mixed = mixed_cycle(ctx, v, a, b, c, start, select=select)
    for i, (p, q, r) in enumerate(states):
        v[p, q, r] = w[i]
        iters[p, q, r] = _MAX_ITER + 1
        if ctx.final_round:
            x = float(w[(i + 1) % 3, 2])
            m, ok = k3.mover_margin(q, r, x, ctx.target, ctx.p_min, ctx.eps, ctx.fin, ctx.tab[10])
            margins[p, q, r] = max(int(m), int(margins[p, q, r]))
            certified[p, q, r] = bool(ok) and m <= margins[p, q, r]
    return mixed
