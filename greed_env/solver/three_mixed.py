"""Cycles of the three-player game that have no equilibrium in pure strategies.

Within a level of score sum, the turn starts ``(a, b, c)``, ``(b, c, a)``, ``(c, a, b)`` form a
cycle: a bust passes the turn with the scores unchanged. Each mover's best in-turn policy
depends only on its own *bust value* ``x_i`` (its value at the next turn start of the cycle),
and is a step function of it: the mover's optimal value ``F_i(x) = max_pi (m_pi + d_pi x)`` is
the upper envelope of one line per policy (``m``: the expected value of its banks, ``d``: its
chance of busting). The others' values, though, jump where the mover switches policy, and
the bust values of the three movers depend on each other's policies, so policy iteration can
cycle for ever: at such a cycle no profile of pure policies is an equilibrium (e.g. mover 0
wants to differ from mover 2, who wants to match mover 0).

An equilibrium always exists once a mover may mix two policies at a *breakpoint* ``beta``
(where their lines cross and it is indifferent): a mix with weight ``lam`` on the policy of the
higher bust chance plays, at the start of the turn, that policy with probability ``lam``.
:func:`mixed_cycle` finds one by support enumeration over the policies that policy
iteration visited (the *candidates*): each mover either plays one policy of its envelope or
mixes two neighbours of it at their breakpoint; the weights solve ``x_i(lam) = beta_i`` for
every mixing mover (Newton's method; the bust values are smooth in the weights), and every
pure mover's policy must be on its envelope at its own bust value. Profiles are tried by the
number of mixing movers (none first), then in the order of the movers and of their options.
A full in-turn pass at every solution's bust values checks that no policy outside the
candidates does better; one that does joins the candidates and the search starts again.

A cycle can have several equilibria (at target 2,000 the cycle of 1,550, 1,650 and 1,800
points has three among its candidates, the same to the movers that mix, up to 2.6e-4 apart to
the others): ``select`` takes the first of that order or the last, and
``docs/three-player.md`` measures how far the choice moves the table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from greed_env.solver import three_kernels as k3
from greed_env.solver.model import SolverError

__all__ = ["SELECTIONS", "CycleContext", "MixedTurn", "Outcome", "cycle_values", "mixed_cycle", "outcome"]

_SAME = 1e-14  # outcomes closer than this in every coordinate are one policy
_BETTER = 1e-13  # a pass beats the candidates' envelope by more than this: a new candidate
_NEWTON_TOL = 1e-15


@dataclass(frozen=True)
class CycleContext:
    """The constants every in-turn pass of one solve shares (see ``three_kernels._pass``)."""

    target: int
    thr: int
    min_bank: int
    final_round: bool
    fin: np.ndarray
    p_min: float
    eps: float
    tab: tuple
    tie: int


@dataclass(frozen=True)
class Outcome:
    """What one in-turn policy of a mover gives: ``m + d * x`` to the mover whose bust is
    worth ``x``, ``d`` the bust chance, ``f1``/``f2`` the next and following player's expected
    banks. ``x`` is the bust value whose optimal pass plays this policy."""

    x: float
    m: float
    d: float
    f1: float
    f2: float

    def line(self, x: float) -> float:
        return self.m + self.d * x

    def same(self, other: Outcome) -> bool:
        return (abs(self.m - other.m) < _SAME and abs(self.d - other.d) < _SAME
                and abs(self.f1 - other.f1) < _SAME and abs(self.f2 - other.f2) < _SAME)


@dataclass(frozen=True)
class MixedTurn:
    """A turn start whose mover mixes: with probability ``prob`` the policy of the optimal
    pass at bust value ``x_high``, else that at ``x_low``."""

    state: tuple[int, int, int]
    prob: float
    x_low: float
    x_high: float


def outcome(ctx: CycleContext, v: np.ndarray, state: tuple[int, int, int], x: float) -> Outcome:
    """The optimal in-turn policy's outcome at ``state`` when a bust is worth ``x``."""
    p, q, r = state
    margin = 0
    if ctx.final_round:
        margin = int(k3.mover_margin(q, r, x, ctx.target, ctx.p_min, ctx.eps, ctx.fin, ctx.tab[10])[0])
    val, d, e1, e2, _rows = k3.in_turn_pass(p, q, r, x, margin, ctx.target, ctx.thr, ctx.min_bank, ctx.final_round,
                                     v, ctx.fin, ctx.tab, ctx.tie)
    return Outcome(x, val - d * x, d, e1, e2)


def cycle_values(out: list[tuple[float, float, float, float]]) -> np.ndarray:
    """``W[i, k]``: value to the ``k``-th player in turn order at the ``i``-th turn start of the
    cycle, when the mover of turn start ``i`` gets ``(m_i, d_i, f1_i, f2_i)`` (the linear
    system of a cycle under fixed policies; the same formulas as ``three_kernels``)."""
    mv = [o[0] for o in out]
    dv = [o[1] for o in out]
    f1 = [o[2] for o in out]
    f2 = [o[3] for o in out]
    det = 1.0 - dv[0] * dv[1] * dv[2]
    if det <= 1e-15:
        raise SolverError("three policies that never bank: the cycle never ends")
    w = np.empty((3, 3))
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        own = (mv[i] + dv[i] * (f2[j] + dv[j] * f1[k])) / det
        w[i, 0] = own
        w[k, 1] = f1[k] + dv[k] * own
        w[j, 2] = f2[j] + dv[j] * w[k, 1]
    return w


def _envelope(cands: list[Outcome]) -> list[Outcome]:
    """The candidates on the upper envelope of their lines, by increasing bust chance."""
    best: dict[float, Outcome] = {}
    for o in sorted(cands, key=lambda o: (o.d, o.m)):
        best[o.d] = o  # equal slopes: the higher line (sorted last) wins
    hull: list[Outcome] = []
    for o in sorted(best.values(), key=lambda o: o.d):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is useless if the line o overtakes a no later than b does
            if (o.m - a.m) * (b.d - a.d) >= (b.m - a.m) * (o.d - a.d):
                hull.pop()
            else:
                break
        hull.append(o)
    return hull


def _breakpoint(lo: Outcome, hi: Outcome) -> float:
    return (lo.m - hi.m) / (hi.d - lo.d)


def _blend(lo: Outcome, hi: Outcome, lam: float) -> tuple[float, float, float, float]:
    return (
        (1 - lam) * lo.m + lam * hi.m,
        (1 - lam) * lo.d + lam * hi.d,
        (1 - lam) * lo.f1 + lam * hi.f1,
        (1 - lam) * lo.f2 + lam * hi.f2,
    )


def _bust_values(w: np.ndarray) -> list[float]:
    return [float(w[(i + 1) % 3, 2]) for i in range(3)]


def _solve_profile(
    options: list[tuple[Outcome, Outcome | None]], ncyc: int
) -> tuple[np.ndarray, list[float]] | None:
    """Weights of the mixing movers (an option with a second outcome) that put each at its
    breakpoint, and the cycle's values; None when there are none in [0, 1]."""
    mixing = [i for i, (_lo, hi) in enumerate(options) if hi is not None]
    betas = [_breakpoint(options[i][0], options[i][1]) for i in mixing]  # type: ignore[arg-type]

    def values(lams: np.ndarray) -> np.ndarray:
        per_mover = []
        for i, (lo, hi) in enumerate(options):
            if hi is None:
                per_mover.append((lo.m, lo.d, lo.f1, lo.f2))
            else:
                per_mover.append(_blend(lo, hi, float(lams[mixing.index(i)])))
        return cycle_values([per_mover[i if ncyc == 3 else 0] for i in range(3)])

    def residual(lams: np.ndarray) -> np.ndarray:
        xs = _bust_values(values(lams))
        return np.array([xs[i] - b for i, b in zip(mixing, betas, strict=True)])

    lams = np.full(len(mixing), 0.5)
    if mixing:
        for _ in range(60):
            res = residual(lams)
            if np.max(np.abs(res)) < _NEWTON_TOL:
                break
            jac = np.empty((len(mixing), len(mixing)))
            h = 1e-6
            for j in range(len(mixing)):
                step = np.zeros(len(mixing))
                step[j] = h
                jac[:, j] = (residual(lams + step) - residual(lams - step)) / (2 * h)
            try:
                delta = np.linalg.solve(jac, res)
            except np.linalg.LinAlgError:
                return None
            lams = np.clip(lams - delta, -0.5, 1.5)
        if np.max(np.abs(residual(lams))) > 1e-13 or np.any(lams < -1e-12) or np.any(lams > 1 + 1e-12):
            return None
        lams = np.clip(lams, 0.0, 1.0)
    return values(lams), [float(x) for x in lams]


def _search(
    cands: list[list[Outcome]], ncyc: int, last: bool = False
) -> tuple[np.ndarray, list[tuple[Outcome, Outcome | None]], list[float]] | None:
    """The first equilibrium over the candidates in the order of the module docstring (``last``:
    the first in the reverse order)."""
    per_mover: list[list[tuple[Outcome, Outcome | None]]] = []
    for i in range(ncyc):
        env = _envelope(cands[i])
        opts: list[tuple[Outcome, Outcome | None]] = [(o, None) for o in env]
        opts += [(env[j], env[j + 1]) for j in range(len(env) - 1)]
        per_mover.append(opts)
    profiles = sorted(
        itertools.product(*[range(len(o)) for o in per_mover]),
        key=lambda prof: (sum(per_mover[i][k][1] is not None for i, k in enumerate(prof)), prof),
        reverse=last,
    )
    for prof in profiles:
        options = [per_mover[i][k] for i, k in enumerate(prof)]
        found = _solve_profile(options, ncyc)
        if found is None:
            continue
        w, lams = found
        xs = _bust_values(w)
        ok = True
        for i, (lo, hi) in enumerate(options):
            if hi is not None:
                continue
            top = max(o.line(xs[i]) for o in cands[i])
            if lo.line(xs[i]) < top - 1e-14:
                ok = False
                break
        if ok:
            return w, options, lams
    return None


SELECTIONS = ("first", "last")
"""Which equilibrium of a cycle that has several among its candidates: the first in the order
of the module docstring (the default), or the last."""

_SPREAD = (0.0, 1e-3, -1e-3, 3e-3, -3e-3)  # policy iteration also starts this far from ``start``


def mixed_cycle(
    ctx: CycleContext, v: np.ndarray, a: int, b: int, c: int, start: list[float], steps: int = 16, rounds: int = 8,
    select: str = "first",
) -> tuple[np.ndarray, list[MixedTurn]]:
    """An equilibrium of the cycle ``(a, b, c)`` allowing mixed policies (module docstring).

    ``start``: the movers' bust values; policy iteration runs ``steps`` steps from it and from
    it shifted by each of ``_SPREAD`` (every policy it meets is a candidate, so that where a
    cycle has several equilibria the choice does not hang on one starting point). ``select``:
    one of :data:`SELECTIONS`. Returns the values ``W[i, k]`` of the three turn starts
    (rotations of ``(a, b, c)`` in order) and the turn starts whose mover mixes.

    Raises:
        SolverError: no equilibrium among the candidates after ``rounds`` rounds of new ones.
    """
    states = [(a, b, c), (b, c, a), (c, a, b)]
    ncyc = 1 if a == b == c else 3
    cands: list[list[Outcome]] = [[] for _ in range(ncyc)]

    def add(i: int, o: Outcome) -> bool:
        if any(o.same(k) for k in cands[i]):
            return False
        cands[i].append(o)
        return True

    if select not in SELECTIONS:
        raise SolverError(f"unknown equilibrium selection {select!r}; known: {', '.join(SELECTIONS)}")
    for shift in _SPREAD:
        xs = [x + shift for x in start]
        for _ in range(steps):
            outs = [outcome(ctx, v, states[i], xs[i]) for i in range(ncyc)]
            for i, o in enumerate(outs):
                add(i, o)
            w = cycle_values([(outs[i if ncyc == 3 else 0].m, outs[i if ncyc == 3 else 0].d,
                               outs[i if ncyc == 3 else 0].f1, outs[i if ncyc == 3 else 0].f2) for i in range(3)])
            xs = _bust_values(w)
    for _ in range(rounds):
        found = _search(cands, ncyc, last=select == "last")
        if found is None:
            raise SolverError(f"no equilibrium among the policies tried at the cycle {states[0]}")
        w, options, lams = found
        xs = _bust_values(w)
        grew = False
        for i in range(ncyc):
            o = outcome(ctx, v, states[i], xs[i])
            top = max(k.line(xs[i]) for k in cands[i])
            if o.line(xs[i]) > top + _BETTER:
                grew = add(i, o) or grew
        if grew:
            continue
        mixed = []
        lam_iter = iter(lams)
        for i, (lo, hi) in enumerate(options):
            if hi is None:
                continue
            lam = next(lam_iter)
            if 0.0 < lam < 1.0:
                for k in range(3) if ncyc == 1 else (i,):
                    mixed.append(MixedTurn(states[k], lam, lo.x, hi.x))
        return w, sorted(set(mixed), key=lambda m: m.state)
    raise SolverError(f"the candidates of the cycle {states[0]} kept growing")
