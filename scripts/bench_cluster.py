"""greed_env on a Ray cluster against this machine, measured in the same run, and the cost model.

Starts a local cluster as a user would (``ray start --head`` and ``ray start --address`` for each
further node, ``--num-cpus`` and ``--object-store-memory`` small: scripts/local_ray_cluster.py),
then measures, each beside its baseline on this machine (numba threads = the cluster's CPUs):

* **tables**: the three-player table at ``--three-target`` and the duel at ``--duel-target``
  solved here and on the cluster (:class:`greed_env.solver.distributed.ClusterLevels`): wall
  seconds and their ratio, the replicas' start, and the synchronisation cost of a level: each
  call's round trip less the time its slowest piece computed in its replica;
* **games**: ``--games`` duel games of threshold-300 against the optimal bot, every decision
  scored (Python chunks), in ``nodes x num_cpus`` local processes and on the cluster;
* **memory**: the replicas' resident and proportional memory during the three-player solve,
  and Trippn's keep tables at a small size (``--trippn-dice`` dice, two five-dice straights)
  held by two workers of one node three ways: once in the object store (read in place), a copy
  each, or split by dice state; and the round trip of exchanging one in-turn row of Trippn's
  dice states (what splitting a race's passes by dice state costs per row);
* **the cost model**: projected wall time on 32, 128 and 512 cores for the three-player table at
  10,000 and for Trippn's race, with memory per worker (printed, and in ``--json``).

The load average is printed before and after; on a shared machine the ratios are the point.

    python scripts/bench_cluster.py --nodes 2 --num-cpus 1 --json runs/bench/cluster.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from local_ray_cluster import LocalRayCluster

from greed_env.evaluation import evaluate
from greed_env.files import atomic_write_text
from greed_env.rules import preset
from greed_env.solver import distributed as dist
from greed_env.solver.objectives import solve_duel
from greed_env.solver.three import level_cost, solve_three

TRIPPN = {"states": 43_008, "groups": 13_176_488, "keeps": 308_978_472, "ns_per_keep_row": 7.3,
          "race_rows": 200 * 201 / 2 * 3.0, "rows_per_pass": 201}
"""Trippn at full size (docs/solver.md: the enumeration's counts, the turn pass's 7.3 ns per keep
and row, and the race's rows of passes: 200 scores, about 3 Newton passes of up to 200 totals)."""
NODE_CORES = 16
"""Cores per node in the projections (32 cores: two nodes; 512: 32)."""
NETWORK_BPS = 1.25e9
"""Bytes per second between nodes in the projections (10 Gb/s)."""
THREE_FULL_CPU_S = 3868.0
"""CPU seconds of the three-player table at 10,000 on one machine (docs/three-player.md): the
projection spreads it over the levels by their estimated rows (``three.level_cost``)."""


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _mem(pid: int) -> tuple[float, float]:
    """Resident and proportional memory of ``pid``, MB."""
    rss = pss = 0.0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Pss:"):
            pss = int(line.split()[1]) / 1024
    return round(rss, 1), round(pss, 1)


def _timed(fn: Any) -> tuple[Any, float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _sync(stats: dist.LevelStats) -> dict[str, Any]:
    """Per call: its round trip less its slowest piece's compute (what the cluster adds)."""
    over = np.array([wall - busy for _, wall, busy in stats.per_batch])
    return {
        "calls": len(stats.per_batch), "levels": stats.levels, "split_levels": stats.split_levels,
        "replica_start_s": round(stats.start_s, 2), "restarts": stats.restarts,
        "sync_median_ms": round(1e3 * float(np.median(over)), 2), "sync_mean_ms": round(1e3 * float(over.mean()), 2),
        "sync_total_s": round(float(over.sum()), 2),
        "compute_s": round(float(sum(b for _, _, b in stats.per_batch)), 2),
    }


def tables(args: argparse.Namespace, threads: int) -> dict[str, Any]:
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    three = preset("ten_thousand", target=args.three_target)
    duel = preset("ten_thousand", target=args.duel_target)
    solve_three(preset("ten_thousand", target=1000))  # compiled before timing
    solve_duel(preset("ten_thousand", target=1000))
    out: dict[str, Any] = {}
    for name, run in (("3p", lambda lv=None: solve_three(three, levels=lv)), ("duel", lambda lv=None: solve_duel(duel, levels=lv))):
        load0 = _load()
        local, wall, cpu = _timed(run)
        out[name] = {"local_wall_s": round(wall, 2), "local_cpu_s": round(cpu, 2), "load": [load0, _load()],
                     "rows": local.meta.get("rows")}
        print(f"{name}: here {wall:.1f} s wall, {cpu:.1f} CPU-s ({threads} threads; load {load0}-{_load()})", flush=True)
    return out


def on_cluster(args: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    three = preset("ten_thousand", target=args.three_target)
    duel = preset("ten_thousand", target=args.duel_target)
    warm = dist.ClusterLevels()
    solve_three(preset("ten_thousand", target=1000), levels=warm)  # each node compiles or loads its kernels
    for name, rules, fn in (("3p", three, solve_three), ("duel", duel, solve_duel)):
        peak: dict[str, float] = {"rss": 0.0, "pss": 0.0}
        levels = dist.ClusterLevels()

        def sample(stats: dist.LevelStats, levels: dist.ClusterLevels = levels, peak: dict[str, float] = peak) -> None:
            if stats.batches % 10 == 1:
                for pid in levels.replica_pids():
                    rss, pss = _mem(pid)
                    peak["rss"], peak["pss"] = max(peak["rss"], rss), max(peak["pss"], pss)

        levels.on_batch = sample
        load0 = _load()
        table, wall, _ = _timed(lambda fn=fn, rules=rules, levels=levels: fn(rules, levels=levels))
        row = base[name]
        row.update(cluster_wall_s=round(wall, 2), ratio=round(wall / row["local_wall_s"], 2), cluster_load=[load0, _load()],
                   replica_rss_mb=peak["rss"], replica_pss_mb=peak["pss"], **_sync(levels.stats))
        row["headline"] = table.headline
        print(f"{name}: cluster {wall:.1f} s wall = {row['ratio']:.2f} x here; {row['calls']} calls for "
              f"{row['levels']} levels ({row['split_levels']} cut), sync median {row['sync_median_ms']} ms, "
              f"total {row['sync_total_s']} s; replicas started in {row['replica_start_s']} s, peak "
              f"{peak['rss']:.0f} MB resident (load {load0}-{_load()})", flush=True)
    return base


def games(args: argparse.Namespace, workers: int) -> dict[str, Any]:
    rules = preset("ten_thousand")
    kw: dict[str, Any] = {"episodes": args.games, "regret_episodes": args.games, "seed": 5, "vector": False}
    evaluate("threshold-300", rules, "duel", episodes=20, regret_episodes=20, vector=False)  # tables loaded
    load0 = _load()
    local, wall_local, _ = _timed(lambda: evaluate("threshold-300", rules, "duel", workers=workers, **kw))
    load1 = _load()
    remote, wall_remote, _ = _timed(lambda: evaluate("threshold-300", rules, "duel", address="auto", **kw))
    same = local.score == remote.score and local.mean_regret == remote.mean_regret
    row = {"games": args.games, "local_wall_s": round(wall_local, 2), "cluster_wall_s": round(wall_remote, 2),
           "ratio": round(wall_remote / wall_local, 2), "same_figures": bool(same), "load": [load0, load1, _load()]}
    print(f"games: {args.games} scored duel games, {workers} processes here {wall_local:.1f} s, cluster "
          f"{wall_remote:.1f} s = {row['ratio']:.2f} x; same figures: {same} (load {load0}-{_load()})", flush=True)
    return row


def _trippn_tables(dice: int) -> Any:
    from greed_env.rules import PRESETS
    from greed_env.solver.carry import carry_tables

    straights = PRESETS["trippn"].to_dict()["straights"][:2]
    return carry_tables(preset("trippn", num_dice=dice, target=2000, straights=straights), False)


class _Holder:
    """A worker holding Trippn's keep tables one of three ways; reports its memory."""

    def __init__(self, how: str, tables: Any, part: int, parts: int) -> None:
        import ray

        arrays = ray.get(tables) if isinstance(tables, ray.ObjectRef) else tables
        if how == "copy":
            arrays = [np.array(a, copy=True) for a in arrays]
        elif how == "split":
            arrays = _states_slice(arrays, part, parts)
        self.arrays = arrays
        self.touched = float(sum(float(a.sum()) for a in arrays))  # every page read once

    def memory(self) -> tuple[float, float]:
        return _mem(os.getpid())


def _states_slice(arrays: list[np.ndarray], part: int, parts: int) -> list[np.ndarray]:
    """The groups and options of dice states ``part`` of ``parts`` (what a worker holds when a
    pass is split by dice state)."""
    gs, gp, ost, osc, onx, pb, pnot = arrays
    n = gs.shape[0] - 1
    s0, s1 = n * part // parts, n * (part + 1) // parts
    g0, g1 = int(gs[s0]), int(gs[s1])
    o0, o1 = int(ost[g0]), int(ost[g1])
    return [np.array(gs[s0:s1 + 1]), np.array(gp[g0:g1]), np.array(ost[g0:g1 + 1]), np.array(osc[o0:o1]),
            np.array(onx[o0:o1]), np.array(pb[s0:s1]), np.array(pnot[s0:s1])]


def memory(args: argparse.Namespace) -> dict[str, Any]:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ct, build_s, _ = _timed(lambda: _trippn_tables(args.trippn_dice))
    arrays = [np.asarray(a) for a in ct.kernel_tables()[1:]]
    table_mb = sum(a.nbytes for a in arrays) / 1e6
    node = ray.get_runtime_context().get_node_id()
    holder = ray.remote(num_cpus=0)(_Holder)
    ref = ray.put(arrays)
    empty = holder.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
        "copy", [np.zeros(1)], 0, 1)
    base_rss, base_pss = ray.get(empty.memory.remote())
    ray.kill(empty)
    out: dict[str, Any] = {"trippn_dice": args.trippn_dice, "states": ct.n_states, "keeps": int(ct.osc.shape[0]),
                           "tables_mb": round(table_mb, 1), "build_s": round(build_s, 1),
                           "empty_worker_mb": [base_rss, base_pss]}
    for how in ("object store", "copy", "split"):
        workers = [holder.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
            "copy" if how == "copy" else ("split" if how == "split" else "shared"), ref, i, 2) for i in range(2)]
        mems = ray.get([w.memory.remote() for w in workers])
        out[how] = {"rss_mb_each": [m[0] - base_rss for m in mems], "pss_mb_each": [m[1] - base_pss for m in mems]}
        for w in workers:
            ray.kill(w)
        print(f"trippn {args.trippn_dice} dice ({ct.n_states} states, {table_mb:.1f} MB of keep tables), two workers "
              f"of one node, {how}: resident above an empty worker {out[how]['rss_mb_each']} MB, proportional "
              f"{out[how]['pss_mb_each']} MB", flush=True)
    out["row_exchange"] = _row_exchange(TRIPPN["states"], args.rounds)
    return out


class _RowWorker:
    def run(self, row: np.ndarray, part: int, parts: int) -> np.ndarray:
        n = row.shape[0]
        return row[n * part // parts:n * (part + 1) // parts] * 1.0


def _row_exchange(states: int, rounds: int) -> dict[str, Any]:
    """Round trip of one row of a pass split by dice state: the driver puts the last row
    (value and slope of every dice state) once, every node returns its slice of the next."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    workers = [ray.remote(num_cpus=0)(_RowWorker).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote() for n in nodes]
    row = np.random.default_rng(0).random(2 * states)
    times = []
    for i in range(rounds + 3):
        t0 = time.perf_counter()
        ref = ray.put(row)
        parts = ray.get([w.run.remote(ref, k, len(workers)) for k, w in enumerate(workers)])
        row = np.concatenate(parts)
        if i >= 3:
            times.append(time.perf_counter() - t0)
    for w in workers:
        ray.kill(w)
    ms = 1e3 * float(np.median(times))
    print(f"row exchange: {2 * states * 8 / 1e3:.0f} KB row over {len(workers)} nodes, median {ms:.2f} ms a round "
          f"({rounds} rounds)", flush=True)
    return {"row_kb": round(2 * states * 8 / 1e3), "nodes": len(workers), "median_ms": round(ms, 2)}


def cost_model(measured: dict[str, Any], three_target: int) -> dict[str, Any]:
    """Projected wall times (see docs/scale.md, Evaluation and tables on a cluster)."""
    t3 = measured["tables"]["3p"]
    here = preset("ten_thousand", target=three_target)
    per_row = t3["local_cpu_s"] / t3["rows"]  # CPU-s per row run
    real_over_est = t3["rows"] / float(level_cost(here).sum())
    full = level_cost(preset("ten_thousand"))
    from_here = float(full.sum()) * real_over_est * per_row  # the same shape, scaled from this run
    levels = full / full.sum() * THREE_FULL_CPU_S  # CPU-s per level at 10,000
    levels = levels[levels > 0][::-1]
    sync_s = t3["sync_median_ms"] / 1e3
    starts = measured["tables"]["3p"]["replica_start_s"]
    out: dict[str, Any] = {"three_cpu_hours": round(float(levels.sum()) / 3600, 2), "per_row_us": round(1e6 * per_row, 2),
                           "three_cpu_hours_from_this_run": round(from_here / 3600, 2), "three_levels": int(levels.shape[0]),
                           "sync_s": sync_s, "three": {}, "trippn_race": {}}
    values_bytes = 24_514 * 3 * (3 * 8 + 8 + 8 + 1)  # the largest level's turn starts: values, steps, margin, flag
    per_row_full = THREE_FULL_CPU_S / float(full.sum() * real_over_est)
    split_cpu = dist.SPLIT_ROWS * per_row_full
    for cores in (32, 128, 512):
        nodes = max(1, cores // NODE_CORES)
        wall = starts
        run = 0.0
        for cpu in levels:
            if cpu >= 2 * split_cpu and nodes > 1:
                wall += run / NODE_CORES + (sync_s if run else 0.0)
                run = 0.0
                wall += cpu / cores + sync_s + values_bytes * nodes / NETWORK_BPS
            else:
                run += cpu
                if run >= dist.BATCH_ROWS * per_row_full:
                    wall += run / NODE_CORES + sync_s
                    run = 0.0
        wall += run / NODE_CORES + (sync_s if run else 0.0)
        out["three"][cores] = {"nodes": nodes, "wall_min": round(wall / 60, 1)}
    rx = measured["memory"]["row_exchange"]["median_ms"] / 1e3
    row_bytes = 2 * TRIPPN["states"] * 8
    tables_gb = (16 * TRIPPN["keeps"] + 16 * TRIPPN["groups"] + 24 * TRIPPN["states"]) / 1e9
    turn_gb = 2 * TRIPPN["rows_per_pass"] * TRIPPN["states"] * 8 / 1e9 * 2  # c, d and the pass's r, dr
    cpu = TRIPPN["race_rows"] * TRIPPN["keeps"] * TRIPPN["ns_per_keep_row"] * 1e-9
    out["trippn_race_cpu_hours"] = round(cpu / 3600, 1)
    out["trippn_tables_gb"] = round(tables_gb, 2)
    for cores in (32, 128, 512):
        nodes = max(1, cores // NODE_CORES)
        sync = TRIPPN["race_rows"] * (rx + row_bytes * nodes / NETWORK_BPS)
        wall = cpu / cores + sync
        out["trippn_race"][cores] = {
            "nodes": nodes, "wall_min": round(wall / 60, 1), "sync_min": round(sync / 60, 1),
            "split_gb_per_node": round(tables_gb / nodes + turn_gb, 2),
            "object_store_gb_per_node": round(tables_gb + turn_gb, 2),
        }
    print(f"cost model: 3p at 10,000 = {out['three_cpu_hours']} CPU-hours ({out['per_row_us']} µs a row here), "
          f"sync {1e3 * sync_s:.1f} ms a call; projected " +
          ", ".join(f"{c} cores {v['wall_min']} min" for c, v in out["three"].items()), flush=True)
    print(f"cost model: Trippn race = {out['trippn_race_cpu_hours']} CPU-hours, keep tables {tables_gb:.1f} GB; projected " +
          ", ".join(f"{c} cores {v['wall_min']} min ({v['sync_min']} of it rows exchanged; "
                    f"{v['split_gb_per_node']} GB a node split, {v['object_store_gb_per_node']} whole)"
                    for c, v in out["trippn_race"].items()), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=2, help="nodes of the local cluster, the head included")
    ap.add_argument("--num-cpus", type=int, default=1, help="CPUs of each node")
    ap.add_argument("--object-store-mb", type=int, default=500, help="object store of each node, MB")
    ap.add_argument("--three-target", type=int, default=3000, help="target of the three-player table measured")
    ap.add_argument("--duel-target", type=int, default=10_000, help="target of the duel table measured")
    ap.add_argument("--games", type=int, default=400, help="scored duel games of the games measurement")
    ap.add_argument("--trippn-dice", type=int, default=5, help="dice of the small Trippn (5: 320 dice states; 6: 8,064, 95 s)")
    ap.add_argument("--rounds", type=int, default=50, help="rounds of the row exchange")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    ap.add_argument("--memory-only", action="store_true", help="only the memory measurements (no tables, games or model)")
    args = ap.parse_args(argv)
    threads = args.nodes * args.num_cpus
    measured: dict[str, Any] = {"load_before": _load(), "nodes": args.nodes, "num_cpus": args.num_cpus,
                                "split_rows": dist.SPLIT_ROWS, "batch_rows": dist.BATCH_ROWS}
    print(f"load average {measured['load_before']}; baselines here with {threads} threads / processes", flush=True)
    base = {} if args.memory_only else tables(args, threads)
    with LocalRayCluster(args.nodes, args.num_cpus, args.object_store_mb * 1_000_000) as local:
        import ray

        print(f"cluster: {args.nodes} nodes of {args.num_cpus} CPU on 127.0.0.1, started in {local.started_s:.1f} s", flush=True)
        os.environ["RAY_ADDRESS"] = local.address
        ray.init(address=local.address, log_to_driver=False, logging_level="WARNING")
        try:
            if not args.memory_only:
                measured["tables"] = on_cluster(args, base)
                measured["games"] = games(args, threads)
            measured["memory"] = memory(args)
        finally:
            ray.shutdown()
    if not args.memory_only:
        measured["cost_model"] = cost_model(measured, args.three_target)
    measured["load_after"] = _load()
    print(f"load average {measured['load_after']}", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(measured, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
