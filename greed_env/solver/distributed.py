"""The level-by-level objectives solved over a Ray cluster (``greed solve ... --address``).

The race, the duel (with or without a fixed number of rounds, carry-over rules included) and
the three-player game are solved level by level: a level's positions depend only on the levels
solved before it (higher score sums; the layer of one turn fewer in a game of rounds) and on
each other within a cycle, never on another position of the same level. So every level is cut
into pieces of about equal estimated work and the pieces run at once on the cluster's nodes.

How (:class:`ClusterLevels`, a drop-in for the single-machine level drivers, whose signatures
and return values it keeps, so the tables are built by the same code either way):

* **Replicas.** One Ray actor per node, with all of that node's CPUs (numba threads inside the
  piece), holds a replica of the value arrays, filled once from the object store.
* **A level.** The driver cuts the level into one piece per node, of work proportional to its
  CPUs (by the positions' estimated rows of in-turn passes), and sends each its piece. A piece
  is solved by the same per-position kernel the single-machine driver runs
  (:mod:`greed_env.solver.level_kernels`), so the values are the same to the last bit. The
  driver gathers the level's values, writes them into its own arrays and into a checkpoint,
  and puts them in the object store once; every replica applies them at the start of its next
  call (the broadcast rides on the next level's call: one round trip per level, not two).
* **Small levels** (the top and bottom of every table, and every level of a race, which is one
  score) are not cut: consecutive ones, up to :data:`BATCH_ROWS` rows, go to one node in one
  call, which solves them in order.
* **A lost node** loses only its piece: a new replica is started from the driver's arrays (all
  levels done so far) and runs that piece again; the level's values are taken once.
* **Checkpoints.** Each level's values are written (atomically) to
  ``CHECKPOINT/<digest>/level-NNNNNN.npz`` as soon as the level is done, the digest naming the
  solve (rules, options, greed-env version). A solve stopped by Ctrl-C, a lost driver or a lost
  cluster starts again where it stopped: the same command reads the levels saved and solves
  the rest. The folder is removed once the solve is whole.

``docs/scale.md`` (Evaluation and tables on a cluster) has the measured overhead per level and
the cost model.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import pickle
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env import __version__, cluster, interrupts
from greed_env.files import atomic_write_with
from greed_env.progress import counter
from greed_env.solver import carry_kernels as ck
from greed_env.solver import kernels
from greed_env.solver import level_kernels as lk
from greed_env.solver import three_kernels as k3
from greed_env.solver.model import SolverError
from greed_env.solver.three import _MAX_ITER as THREE_MAX_ITER
from greed_env.solver.three import _resolve
from greed_env.solver.three_mixed import CycleContext, MixedTurn

__all__ = ["BATCH_ROWS", "SPLIT_ROWS", "ClusterLevels", "LevelPlan"]

SPLIT_ROWS = 20_000.0
"""Fewest estimated rows of in-turn passes in one piece of a level (about 60 ms of a core, a
few round trips): a smaller level runs whole on one node, since a round trip to a node
(12-14 ms on one host, scripts/bench_cluster.py) costs more than sharing it saves."""

BATCH_ROWS = 200_000.0
"""Most estimated rows of consecutive small levels sent to one node in one call (about 0.6 s
of a core: the unit of progress and of checkpoints between levels that are cut)."""

LOST_NODE_TRIES = 3
"""Times one piece is run again on a new replica before the solve gives up."""


# ------------------------------------------------------------------------------------------
# what a level is, per objective


class LevelPlan(ABC):
    """One solve's levels: the arrays, the levels in order, each level's positions (units)
    and their estimated rows, and how a piece of units is solved and written. Sent (pickled)
    to every replica once."""

    name = ""

    @abstractmethod
    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays the levels are solved into (sent to every replica once)."""

    @abstractmethod
    def levels(self) -> list[int]:
        """The levels, in the order they are solved."""

    @abstractmethod
    def units(self, level: int) -> np.ndarray:
        """The positions (units) of ``level``."""

    @abstractmethod
    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        """The estimated rows of each of ``units``."""

    @abstractmethod
    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        """Solve ``units`` of ``level`` in ``arrays`` (in place) and return their values."""

    @abstractmethod
    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        """Write the values ``out`` of ``units`` (a piece, or the whole level) into ``arrays``."""


def _pairs(target: int, level: int) -> np.ndarray:
    """The movers ``a`` of the pairs ``(a, level - a), (level - a, a)`` of a duel level."""
    return np.arange(max(0, level - (target - 1)), level // 2 + 1, dtype=np.int64)


@dataclass
class _DuelPlan(LevelPlan):
    target: int
    args: tuple  # thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane
    name: str = "duel"

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.target
        return {"v": np.zeros((n, n)), "iters": np.zeros((n, n), dtype=np.int64),
                "margins": np.zeros((n, n), dtype=np.int64), "certified": np.ones((n, n), dtype=np.bool_)}

    def levels(self) -> list[int]:
        return list(range(2 * self.target - 2, -1, -1))

    def units(self, level: int) -> np.ndarray:
        return _pairs(self.target, level)

    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        return np.full(units.shape[0], 2.5 * (2 * self.target - level))

    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        a = arrays
        lk.duel_pairs(level, units, a["v"], a["iters"], a["margins"], a["certified"], self.target, *self.args)
        return self.read(arrays, level, units)

    @staticmethod
    def read(arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        b = level - units
        v, it, m, c = arrays["v"], arrays["iters"], arrays["margins"], arrays["certified"]
        return {"v_ab": v[units, b], "v_ba": v[b, units], "it": it[units, b],
                "m_ab": m[units, b], "m_ba": m[b, units], "c_ab": c[units, b], "c_ba": c[b, units]}

    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        b = level - units
        v, it, m, c = arrays["v"], arrays["iters"], arrays["margins"], arrays["certified"]
        v[units, b], v[b, units] = out["v_ab"], out["v_ba"]
        it[units, b], it[b, units] = out["it"], out["it"]
        m[units, b], m[b, units] = out["m_ab"], out["m_ba"]
        c[units, b], c[b, units] = out["c_ab"], out["c_ba"]


@dataclass
class _CarryDuelPlan(LevelPlan):
    target: int
    args: tuple  # ctab, max_keep, vbust, q, live, tie, tol, max_iter
    name: str = "carry-over duel"

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.target
        return {"v": np.zeros((n, n)), "iters": np.zeros((n, n), dtype=np.int64)}

    def levels(self) -> list[int]:
        return list(range(2 * self.target - 2, -1, -1))

    def units(self, level: int) -> np.ndarray:
        return _pairs(self.target, level)

    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        n_states = self.args[0][0]
        return np.full(units.shape[0], 2.5 * (2 * self.target - level) * n_states)

    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        lk.carry_pairs(level, units, arrays["v"], arrays["iters"], self.target, *self.args)
        b = level - units
        return {"v_ab": arrays["v"][units, b], "v_ba": arrays["v"][b, units], "it": arrays["iters"][units, b]}

    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        b = level - units
        arrays["v"][units, b], arrays["v"][b, units] = out["v_ab"], out["v_ba"]
        arrays["iters"][units, b], arrays["iters"][b, units] = out["it"], out["it"]


@dataclass
class _RacePlan(LevelPlan):
    target: int
    args: tuple  # race_score's after target: thr, min_bank, tab, reroll, tol, max_iter (or the carry-over's)
    carry: bool = False
    name: str = "race"

    def arrays(self) -> dict[str, np.ndarray]:
        return {"u": np.zeros(self.target + 1), "iters": np.zeros(self.target, dtype=np.int64)}

    def levels(self) -> list[int]:
        return list(range(self.target - 1, -1, -1))

    def units(self, level: int) -> np.ndarray:
        return np.array([level], dtype=np.int64)

    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        per_row = self.args[0][0] if self.carry else 1  # dice states per row of a carry-over pass
        return np.array([3.0 * (self.target - level) * per_row])

    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        score = ck.carry_race_score if self.carry else kernels.race_score
        score(level, arrays["u"], arrays["iters"], self.target, *self.args)
        return {"u": arrays["u"][units], "it": arrays["iters"][units]}

    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        arrays["u"][units] = out["u"]
        arrays["iters"][units] = out["it"]


@dataclass
class _RoundsPlan(LevelPlan):
    turns: int
    target: int
    args: tuple  # thr, min_bank, final_round, past, g_in, g_out, p_min, eps, tab, reroll
    name: str = "rounds"

    def arrays(self) -> dict[str, np.ndarray]:
        return {"v": np.zeros((self.turns + 1, self.target, self.target))}

    def levels(self) -> list[int]:
        return list(range(1, self.turns + 1))

    def units(self, level: int) -> np.ndarray:
        return np.arange(self.target * self.target, dtype=np.int64)

    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        return (self.target - units // self.target + 1).astype(float)

    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        lk.rounds_cells(level, units, arrays["v"], self.target, *self.args)
        return {"v": arrays["v"][level].ravel()[units]}

    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        arrays["v"][level].reshape(-1)[units] = out["v"]


@dataclass
class _ThreePlan(LevelPlan):
    ctx: CycleContext
    tol: float
    max_iter: int
    select: str
    name: str = "3p"

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.ctx.target
        return {"v": np.zeros((n, n, n, 3)), "iters": np.zeros((n, n, n), dtype=np.int64),
                "margins": np.zeros((n, n, n), dtype=np.int64), "certified": np.ones((n, n, n), dtype=np.bool_)}

    def levels(self) -> list[int]:
        return list(range(3 * (self.ctx.target - 1), -1, -1))

    def units(self, level: int) -> np.ndarray:
        return k3.level_cycles(level, self.ctx.target, self.ctx.thr)

    def costs(self, level: int, units: np.ndarray) -> np.ndarray:
        return 2.8 * lk.cycle_costs(units, self.ctx.target, self.ctx.thr, self.ctx.min_bank)

    @staticmethod
    def rotations(units: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The three turn starts of each cycle: ``(p, q, r)`` index arrays of shape (n, 3)."""
        a, b, c = units[:, 0:1], units[:, 1:2], units[:, 2:3]
        return np.hstack([a, b, c]), np.hstack([b, c, a]), np.hstack([c, a, b])

    def solve(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray) -> dict[str, np.ndarray]:
        x = self.ctx
        v, iters, margins, certified = arrays["v"], arrays["iters"], arrays["margins"], arrays["certified"]
        rows = k3.solve_level(units, v, iters, margins, certified, x.target, x.thr, x.min_bank, x.final_round,
                              x.fin, x.p_min, x.eps, x.tab, self.tol, self.max_iter, x.tie)
        mixed: list[MixedTurn] = []
        unsettled = units[iters[units[:, 0], units[:, 1], units[:, 2]] < 0]
        for a, b, c in unsettled:
            mixed += _resolve(x, v, iters, margins, certified, int(a), int(b), int(c), self.select)
        p, q, r = self.rotations(units)
        return {
            "v": v[p, q, r], "it": iters[p, q, r], "m": margins[p, q, r], "c": certified[p, q, r],
            "rows": np.array([rows]), "resolved": np.array([unsettled.shape[0]], dtype=np.int64),
            "mix_state": np.array([m.state for m in mixed], dtype=np.int64).reshape(-1, 3),
            "mix_prob": np.array([m.prob for m in mixed], dtype=float),
            "mix_x": np.array([(m.x_low, m.x_high) for m in mixed], dtype=float).reshape(-1, 2),
        }

    def write(self, arrays: dict[str, np.ndarray], level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        p, q, r = self.rotations(units)
        arrays["v"][p, q, r] = out["v"]
        arrays["iters"][p, q, r] = out["it"]
        arrays["margins"][p, q, r] = out["m"]
        arrays["certified"][p, q, r] = out["c"]


def _join(outs: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The values of a level from those of its pieces (in unit order)."""
    if len(outs) == 1:
        return outs[0]
    return {key: np.concatenate([o[key] for o in outs]) for key in outs[0]}


# ------------------------------------------------------------------------------------------
# checkpoints


class _Checkpoint:
    """The levels of one solve saved so far, in ``root/<digest of the plan>/``."""

    def __init__(self, root: Path | None, plan: LevelPlan) -> None:
        digest = hashlib.sha256(pickle.dumps((__version__, plan))).hexdigest()[:16]
        self.folder = None if root is None else Path(root) / f"{plan.name.replace(' ', '-')}-{digest}"

    def path(self, level: int) -> Path:
        assert self.folder is not None
        return self.folder / f"level-{level:06d}.npz"

    def restore(self, plan: LevelPlan, arrays: dict[str, np.ndarray], levels: list[int]) -> list[tuple[int, np.ndarray, dict[str, np.ndarray]]]:
        """Write the saved levels into ``arrays`` (from the first, up to the first missing one)
        and return them."""
        done: list[tuple[int, np.ndarray, dict[str, np.ndarray]]] = []
        if self.folder is None or not self.folder.is_dir():
            return done
        for level in levels:
            path = self.path(level)
            if not path.is_file():
                break
            try:
                with np.load(path) as f:
                    out = {k.removeprefix("out_"): f[k] for k in f.files if k.startswith("out_")}
                    units = f["units"]
            except (OSError, ValueError, KeyError):
                break  # a damaged file: solved again from here
            plan.write(arrays, level, units, out)
            done.append((level, units, out))
        return done

    def save(self, level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        if self.folder is None:
            return
        blobs = {"units": units, **{f"out_{k}": v for k, v in out.items()}}

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, **blobs)

        atomic_write_with(self.path(level), write)

    def remove(self) -> None:
        if self.folder is None or not self.folder.is_dir():
            return
        for f in self.folder.glob("level-*.npz"):
            f.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.folder.rmdir()


# ------------------------------------------------------------------------------------------
# the replicas


class _Replica:
    """A node's replica of the value arrays (a Ray actor): applies the levels broadcast since
    its last call, then solves the pieces it is given, in order."""

    def __init__(self, plan: bytes, arrays: dict[str, np.ndarray], threads: int) -> None:
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        self.plan: LevelPlan = pickle.loads(plan)
        self.arrays = {k: np.array(v, copy=True) for k, v in arrays.items()}

    def run(self, deltas: list[Any], work: list[tuple[int, np.ndarray]]) -> tuple[list[dict[str, np.ndarray]], float]:
        import ray

        for level, units, out in ray.get(deltas) if deltas else ():
            self.plan.write(self.arrays, level, units, out)
        t0 = time.perf_counter()
        outs = []
        for level, units in work:
            out = self.plan.solve(self.arrays, level, units)
            self.plan.write(self.arrays, level, units, out)
            outs.append(out)
        return outs, time.perf_counter() - t0

    def pid(self) -> int:
        import os

        return os.getpid()

    def version(self) -> str:
        return __version__


@dataclass
class _Node:
    node_id: str
    cpus: int
    actor: Any = None
    deltas: list[Any] = field(default_factory=list)


@dataclass
class _Piece:
    """Work for one node in one call: a piece of one level, or several whole small levels."""

    work: list[tuple[int, np.ndarray]]
    node: int
    tries: int = 0


@dataclass
class LevelStats:
    """What the driver measured, for the benchmark: levels, calls, seconds solving in the
    replicas and waiting in the driver, replicas started again."""

    levels: int = 0
    calls: int = 0
    batches: int = 0
    split_levels: int = 0
    wall_s: float = 0.0
    busy_s: float = 0.0
    start_s: float = 0.0
    restarts: int = 0
    per_batch: list[tuple[int, float, float]] = field(default_factory=list)
    """(levels, wall seconds of the round trip, the slowest piece's seconds in its replica)."""


class _Replicas:
    def __init__(self, plan: LevelPlan, arrays: dict[str, np.ndarray], stats: LevelStats) -> None:
        ray = cluster.require_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray = ray
        self.affinity = NodeAffinitySchedulingStrategy
        self.stats = stats
        self.plan_blob = pickle.dumps(plan)
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_Replica)
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        if not nodes:
            raise SolverError("the Ray cluster has no node with a CPU")
        t0 = time.perf_counter()
        self.nodes = [_Node(n["NodeID"], int(n["Resources"]["CPU"])) for n in nodes]
        ref = ray.put(arrays)
        for node in self.nodes:
            node.actor = self._start(node, ref)
        try:
            versions = ray.get([n.actor.version.remote() for n in self.nodes])
        except ray.exceptions.RayActorError as exc:
            self.close()
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise cluster.ClusterError(f"a replica of the levels did not start on the cluster: {first}") from None
        other = next((v for v in versions if v != __version__), None)
        if other is not None:
            self.close()
            raise cluster.ClusterError(
                f"a node runs greed-env {other}, the driver {__version__}: install the same version on every node"
            )
        stats.start_s = time.perf_counter() - t0

    def _start(self, node: _Node, arrays_ref: Any) -> Any:
        strategy = self.affinity(node.node_id, soft=True)
        return self.actor_class.options(num_cpus=node.cpus, scheduling_strategy=strategy).remote(
            self.plan_blob, arrays_ref, node.cpus
        )

    def _restart(self, node: _Node, arrays_ref: Any) -> Any:
        """A replica in place of a lost one: asks for no CPU (the node it had may be gone and
        the others' CPUs are held by their replicas), preferring the same node."""
        strategy = self.affinity(node.node_id, soft=True)
        return self.actor_class.options(num_cpus=0, scheduling_strategy=strategy).remote(
            self.plan_blob, arrays_ref, node.cpus
        )

    @property
    def weights(self) -> np.ndarray:
        return np.array([n.cpus for n in self.nodes], dtype=float)

    def broadcast(self, level: int, units: np.ndarray, out: dict[str, np.ndarray]) -> None:
        ref = self.ray.put((level, units, out))
        for node in self.nodes:
            node.deltas.append(ref)

    def run(self, pieces: list[_Piece], arrays: dict[str, np.ndarray]) -> list[list[dict[str, np.ndarray]]]:
        """Every piece's values (in the order given); a piece whose node is lost runs again on
        a new replica made from ``arrays`` (the driver's: every level done so far)."""
        ray = self.ray
        t0 = time.perf_counter()
        refs = {self._submit(p): i for i, p in enumerate(pieces)}
        results: list[Any] = [None] * len(pieces)
        slowest = 0.0
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=cluster.WAIT_S)
            interrupts.check()
            for ref in ready:
                i = refs.pop(ref)
                try:
                    outs, busy = ray.get(ref)
                except ray.exceptions.RayActorError:
                    refs[self._replace(pieces[i], arrays)] = i
                    continue
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    raise cause if isinstance(cause, BaseException) else exc from None
                results[i] = outs
                slowest = max(slowest, busy)
                self.stats.busy_s += busy
        wall = time.perf_counter() - t0
        self.stats.calls += len(pieces)
        self.stats.per_batch.append((sum(len(p.work) for p in pieces), wall, slowest))
        return results

    def _submit(self, piece: _Piece) -> Any:
        node = self.nodes[piece.node]
        deltas, node.deltas = node.deltas, []
        return node.actor.run.remote(deltas, piece.work)

    def _replace(self, piece: _Piece, arrays: dict[str, np.ndarray]) -> Any:
        piece.tries += 1
        if piece.tries > LOST_NODE_TRIES:
            raise SolverError(
                f"a piece of level {piece.work[0][0]} lost its worker {piece.tries} times; the levels done "
                "are checkpointed: run the same command again to go on"
            )
        self.stats.restarts += 1
        node = self.nodes[piece.node]
        node.actor = self._restart(node, self.ray.put(arrays))
        node.deltas = []
        return self._submit(piece)

    def close(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(Exception):  # already gone with its node
                self.ray.kill(node.actor)


# ------------------------------------------------------------------------------------------
# the driver


def _cuts(costs: np.ndarray, weights: np.ndarray) -> list[slice]:
    """Contiguous slices of the units, one per weight, of estimated work proportional to it
    (empty slices dropped)."""
    total = costs.sum()
    bounds = np.cumsum(weights) / weights.sum() * total
    ends = np.searchsorted(np.cumsum(costs), bounds[:-1], side="left") + 1
    edges = [0, *np.minimum(ends, costs.shape[0]).tolist(), costs.shape[0]]
    return [slice(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _batches(
    plan: LevelPlan, levels: list[tuple[int, np.ndarray]], nodes: int
) -> Iterator[tuple[list[int], list[np.ndarray], list[float], bool]]:
    """Groups of levels to run together: one large level (to be cut), or a run of small ones.
    Yields ``(levels, units, costs, split)``."""
    run: tuple[list[int], list[np.ndarray], list[float]] = ([], [], [])
    for level, units in levels:
        total = float(plan.costs(level, units).sum())
        big = nodes > 1 and units.shape[0] > 1 and total >= 2 * SPLIT_ROWS
        if (big or sum(run[2]) + total > BATCH_ROWS) and run[0]:
            yield run[0], run[1], run[2], False
            run = ([], [], [])
        if big:
            yield [level], [units], [total], True
            continue
        run[0].append(level)
        run[1].append(units)
        run[2].append(total)
    if run[0]:
        yield run[0], run[1], run[2], False


class ClusterLevels:
    """Level drivers that run on the Ray cluster this process is connected to
    (:func:`greed_env.cluster.connected`): each method takes the arguments and returns the
    values of the single-machine driver it replaces. ``checkpoint``: the folder of the levels'
    checkpoints (None: none)."""

    def __init__(self, checkpoint: Path | None = None, on_batch: Callable[[LevelStats], None] | None = None) -> None:
        self.checkpoint = checkpoint
        self.on_batch = on_batch
        self.stats = LevelStats()
        self._replicas: _Replicas | None = None

    def replica_pids(self) -> list[int]:
        """The process ids of the replicas of the solve running now (for measuring their
        memory, or ending one to see a lost node handled); empty between solves."""
        replicas = self._replicas
        if replicas is None:
            return []
        ray = replicas.ray
        return [int(p) for p in ray.get([n.actor.pid.remote() for n in replicas.nodes])]

    def run(self, plan: LevelPlan, prog: np.ndarray, on_level: Callable[[int, np.ndarray, dict[str, np.ndarray], float], None] | None = None) -> dict[str, np.ndarray]:
        """Every level of ``plan``; returns the arrays. ``prog`` gets the work done and the
        total (estimated rows); ``on_level(level, units, values, seconds)`` after each level
        (restored ones with 0 seconds)."""
        arrays = plan.arrays()
        levels = [(lv, u) for lv in plan.levels() if (u := plan.units(lv)).shape[0]]
        ckpt = _Checkpoint(self.checkpoint, plan)
        restored = ckpt.restore(plan, arrays, [lv for lv, _ in levels])
        prog[0] = 0.0
        prog[1] = 1.0
        for level, units, out in restored:
            if on_level is not None:
                on_level(level, units, out, 0.0)
        todo = levels[len(restored):]
        stats = self.stats
        t_start = time.perf_counter()
        replicas = self._replicas = _Replicas(plan, arrays, stats) if todo else None
        try:
            total = 0.0
            batches = []
            for batch in _batches(plan, todo, len(replicas.nodes) if replicas else 1):
                batches.append(batch)
                total += sum(batch[2])
            prog[1] = max(total, 1.0)
            for lv, units, cost, split in batches:
                interrupts.check()
                assert replicas is not None
                t0 = time.perf_counter()
                if split:
                    cuts = _cuts(plan.costs(lv[0], units[0]), replicas.weights)
                    pieces = [_Piece([(lv[0], units[0][s])], node=i) for i, s in enumerate(cuts)]
                    stats.split_levels += 1
                else:
                    pieces = [_Piece(list(zip(lv, units, strict=True)), node=stats.batches % len(replicas.nodes))]
                results = replicas.run(pieces, arrays)
                dt = time.perf_counter() - t0
                stats.batches += 1
                for j, level in enumerate(lv):
                    out = _join([r[0] for r in results]) if split else results[0][j]
                    plan.write(arrays, level, units[j], out)
                    ckpt.save(level, units[j], out)
                    replicas.broadcast(level, units[j], out)
                    stats.levels += 1
                    if on_level is not None:
                        on_level(level, units[j], out, dt * cost[j] / max(sum(cost), 1e-300))
                prog[0] = min(prog[0] + sum(cost), prog[1])
                if self.on_batch is not None:
                    self.on_batch(stats)
        finally:
            if replicas is not None:
                replicas.close()
            self._replicas = None
            stats.wall_s += time.perf_counter() - t_start
        prog[0] = prog[1]
        ckpt.remove()
        return arrays

    # the single-machine drivers' signatures ------------------------------------------------

    def duel(self, target: int, thr: int, min_bank: int, final_round: bool, g_in: np.ndarray, g_out: np.ndarray,
             p_min: float, eps: float, tab: tuple, reroll: int, tol: float, max_iter: int, prog: np.ndarray,
             plane: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:func:`greed_env.solver.kernels.duel_solve` on the cluster."""
        plan = _DuelPlan(target, (thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane))
        a = self.run(plan, prog)
        return a["v"], a["iters"], a["margins"], a["certified"]

    def race(self, target: int, thr: int, min_bank: int, tab: tuple, reroll: int, tol: float, max_iter: int,
             prog: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`greed_env.solver.kernels.race_solve` on the cluster."""
        a = self.run(_RacePlan(target, (thr, min_bank, tab, reroll, tol, max_iter)), prog)
        return a["u"][:target], a["iters"]

    def carry_race(self, target: int, ctab: tuple, max_keep: int, vbust: bool, tol: float, max_iter: int,
                   prog: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`greed_env.solver.carry_kernels.carry_race_solve` on the cluster."""
        a = self.run(_RacePlan(target, (ctab, max_keep, vbust, tol, max_iter), carry=True, name="carry-over race"), prog)
        return a["u"][:target], a["iters"]

    def carry_duel(self, target: int, ctab: tuple, max_keep: int, vbust: bool, q: np.ndarray, tie: float, tol: float,
                   max_iter: int, prog: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`greed_env.solver.carry_kernels.carry_duel_solve_lanes` on the cluster."""
        live = ck.live_scores(target, ctab, max_keep, vbust)
        a = self.run(_CarryDuelPlan(target, (ctab, max_keep, vbust, q, live, tie, tol, max_iter)), prog)
        return a["v"], a["iters"]

    def rounds(self, turns: int, target: int, thr: int, min_bank: int, final_round: bool, past: bool,
               g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int,
               prog: np.ndarray) -> np.ndarray:
        """:func:`greed_env.solver.rounds.rounds_duel_solve` on the cluster."""
        plan = _RoundsPlan(turns, target, (thr, min_bank, final_round, past, g_in, g_out, p_min, eps, tab, reroll))
        return self.run(plan, prog)["v"]

    def three(self, rules: Any, tb: Any, target: int, thr: int, mb: int, fin: np.ndarray, p_min: float, eps: float,
              tab: tuple, tol: float, tie_code: int, on_level: Callable[[int, int, float, float], None] | None,
              select: str = "first") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, list[float], list[MixedTurn], int]:
        """``greed_env.solver.three._levels`` on the cluster."""
        ctx = CycleContext(target, thr, mb, rules.final_round, fin, p_min, eps, tab, tie_code)
        seconds = [0.0] * (3 * target - 2)
        tally = {"rows": 0.0, "resolved": 0}
        mixed: list[MixedTurn] = []

        def level_done(level: int, units: np.ndarray, out: dict[str, np.ndarray], dt: float) -> None:
            rows = float(out["rows"].sum())
            tally["rows"] += rows
            tally["resolved"] += int(out["resolved"].sum())
            mixed.extend(
                MixedTurn((int(s[0]), int(s[1]), int(s[2])), float(p), float(x[0]), float(x[1]))
                for s, p, x in zip(out["mix_state"], out["mix_prob"], out["mix_x"], strict=True)
            )
            seconds[level] = round(dt, 4)
            if on_level is not None:
                on_level(level, int(units.shape[0]), rows, dt)

        a = self.run(_ThreePlan(ctx, tol, THREE_MAX_ITER, select), counter(), level_done)
        return (a["v"], a["iters"], a["margins"], a["certified"], tally["rows"], seconds, mixed,
                int(tally["resolved"]))
