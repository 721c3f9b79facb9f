"""Speed of the native vector engine against the usual ways of batching environments.

Measures, in one run and with the same random-legal-play policy (a uniform legal action per
decision):

* the native vector env (``SolitaireVectorEnv``, whole games: objective ``race``) at several
  batch sizes, one thread (and with ``--threads`` the engine's thread pool too, each of its
  repeats between two one-thread runs, with the all/one ratio of every repeat and the second
  one-thread run against the first as the noise floor; ``--neighbour`` keeps a busy-loop
  process running beside them);
* the same against the threshold bot in ``DuelVectorEnv``;
* baselines: the single Gymnasium env in a Python loop, Stable-Baselines3 ``DummyVecEnv`` and
  ``SubprocVecEnv`` of single envs, and PettingZoo's ``connect_four_v3`` played at random;
* MaskablePPO training steps/s on the native vector env against ``SubprocVecEnv``
  (``--ppo-steps`` per run, same PPO settings and rollout size).

Rates are decisions (environment steps) per second of wall-clock time, median of
``--repeats`` runs; the ratios are against baselines measured in the same run. Rates of
the in-process loops per second of process CPU time are printed as well, since on a shared
machine wall time also counts other people's work (the load average is printed).

    python scripts/bench_vector.py --rules ten_thousand --repeats 3
    python scripts/bench_vector.py --rules ten_thousand --batches 4096 --threads --native-only --repeats 5
    python scripts/bench_vector.py --rules progressive --repeats 3 --decisions 200000 \
        --baseline-decisions 2000 --batches 1,16,256,4096 --ppo-steps 0

Any rules the vector engine models work (every preset but ``trippn``); ``docs/scale.md`` holds
the figures and commands of both runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from greed_env.files import atomic_write_text

BATCHES = (1, 16, 256, 4096, 16384)


def _median_rate(run: Callable[[], tuple[int, float, float]], repeats: int) -> tuple[float, float]:
    """Median decisions/s by wall time and by process CPU time."""
    walls, cpus = [], []
    for _ in range(repeats):
        n, wall, cpu = run()
        walls.append(n / wall)
        cpus.append(n / cpu if cpu > 0 else float("nan"))
    return statistics.median(walls), statistics.median(cpus)


def _timed(loop: Callable[[], int]) -> tuple[int, float, float]:
    w, c = time.perf_counter(), time.process_time()
    n = loop()
    return n, time.perf_counter() - w, time.process_time() - c


def _pick(masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise uniform choice among the unmasked actions of each row."""
    counts = masks.sum(axis=1)
    k = (u * counts).astype(np.int64)
    return np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1)


# ------------------------------------------------------------------------------------------
# the native engine


def _native_loop(
    rules: str, batch: int, decisions: int, parallel: bool | int, duel: bool
) -> Callable[[], int]:
    from greed_env.vector import DuelVectorEnv, SolitaireVectorEnv

    if duel:
        env = DuelVectorEnv(batch, rules=rules, opponent="threshold", parallel=parallel)
    else:
        env = SolitaireVectorEnv(batch, rules=rules, objective="race", parallel=parallel)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = max(10, min(decisions // batch, 30_000))
    for _ in range(3):
        env.step(env.sample_legal_actions(rng))

    def loop() -> int:
        for _ in range(steps):
            env.step(env.sample_legal_actions(rng))
        return steps * batch

    return loop


def bench_native(
    rules: str, batch: int, decisions: int, repeats: int, parallel: bool | int, duel: bool
) -> tuple[float, float]:
    loop = _native_loop(rules, batch, decisions, parallel, duel)
    return _median_rate(lambda: _timed(loop), repeats)


def bench_threads(
    rules: str, batch: int, decisions: int, repeats: int, threads: int
) -> tuple[tuple[float, float], tuple[float, float], list[float], list[float]]:
    """One thread and ``threads`` threads on the same batch size, the repeats interleaved
    (one, all, one again, ...) so that all see the same machine; returns the one- and
    all-thread medians, the all-thread / one-thread ratio of every repeat (against both
    one-thread runs around it) and, as the noise floor of those ratios, the second one-thread
    run of each repeat against the first."""
    loops = {
        "one": _native_loop(rules, batch, decisions, 1, False),
        "all": _native_loop(rules, batch, decisions, threads, False),
        "again": _native_loop(rules, batch, decisions, 1, False),
    }
    runs: dict[str, list[tuple[int, float, float]]] = {name: [] for name in loops}
    for _ in range(repeats):
        for name, loop in loops.items():
            runs[name].append(_timed(loop))

    def rates(name: str) -> list[float]:
        return [n / w for n, w, _ in runs[name]]

    # each all-thread run is bracketed by the one-thread runs before and after it, and set
    # against their geometric mean, so that a drift of the machine's speed within a repeat
    # (on this shared machine one thread against itself moves by up to a third) cancels
    one, many, again = rates("one"), rates("all"), rates("again")
    bracketed = [m / (a * b) ** 0.5 for m, a, b in zip(many, one, again, strict=True)]
    floor = [b / a for a, b in zip(one, again, strict=True)]

    def median(rs: list[tuple[int, float, float]]) -> tuple[float, float]:
        return statistics.median(n / w for n, w, _ in rs), statistics.median(
            n / c for n, _, c in rs if c > 0
        )

    return median(runs["one"]), median(runs["all"]), bracketed, floor


def _busy_neighbour() -> subprocess.Popen[bytes]:
    """Another process that keeps one core busy (a Python busy loop) until killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


# ------------------------------------------------------------------------------------------
# baselines


def _single_env(rules: str) -> Any:
    import gymnasium as gym

    import greed_env.envs  # noqa: F401

    return gym.make("greed_env/Solitaire-v0", rules=rules, objective="race")


def bench_single(rules: str, decisions: int, repeats: int) -> tuple[float, float]:
    env = _single_env(rules)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    state = {"info": info}

    def loop() -> int:
        info = state["info"]
        for _ in range(decisions):
            legal = np.flatnonzero(info["action_mask"])
            a = legal[int(rng.random() * len(legal))]
            _, _, term, trunc, info = env.step(a)
            if term or trunc:
                _, info = env.reset()
        state["info"] = info
        return decisions

    return _median_rate(lambda: _timed(loop), repeats)


def _make_single(rules: str) -> Callable[[], Any]:
    import functools

    return functools.partial(_single_env, rules)


def bench_sb3(
    kind: str, rules: str, n_envs: int, decisions: int, repeats: int
) -> tuple[float, float]:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [_make_single(rules) for _ in range(n_envs)]
    venv = DummyVecEnv(fns) if kind == "dummy" else SubprocVecEnv(fns)
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    steps = max(10, decisions // n_envs)

    def loop() -> int:
        for _ in range(steps):
            masks = np.stack(venv.env_method("action_masks"))
            venv.step(_pick(masks, rng.random(n_envs)))
        return steps * n_envs

    try:
        return _median_rate(lambda: _timed(loop), repeats)
    finally:
        venv.close()


def bench_connect_four(decisions: int, repeats: int) -> tuple[float, float]:
    from pettingzoo.classic import connect_four_v3

    env = connect_four_v3.env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def loop() -> int:
        done = 0
        while done < decisions:
            env.reset(seed=int(rng.integers(1 << 30)))
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[int(rng.random() * len(legal))]))
                done += 1
                del agent
        return done

    return _median_rate(lambda: _timed(loop), repeats)


# ------------------------------------------------------------------------------------------
# training throughput


def bench_ppo(kind: str, rules: str, n_envs: int, total: int, repeats: int) -> float:
    """MaskablePPO environment steps per second of wall time (rollouts and updates)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    torch.set_num_threads(1)
    rates = []
    for k in range(repeats):
        if kind == "native":
            from greed_env.vector.sb3 import make_sb3_vec_env

            venv = make_sb3_vec_env("greed_env/Solitaire-v0", n_envs, seed=k, rules=rules)
        else:
            venv = SubprocVecEnv([_make_single(rules) for _ in range(n_envs)])
            venv.seed(k)
        rollout = 4096
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            n_steps=rollout // n_envs,
            batch_size=512,
            n_epochs=2,
            seed=k,
            device="cpu",
            verbose=0,
        )
        start = time.perf_counter()
        model.learn(total_timesteps=total)
        rates.append(model.num_timesteps / (time.perf_counter() - start))
        venv.close()
    return statistics.median(rates)


# ------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--decisions",
        type=int,
        default=3_000_000,
        help="native decisions per repeat (at batch 4,096 about 730 steps: shorter repeats "
        "time the thread pool's start and its first probes more than the engine)",
    )
    ap.add_argument("--baseline-decisions", type=int, default=20_000)
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)))
    ap.add_argument(
        "--threads",
        action="store_true",
        help="also time the engine's thread pool (all threads against one, interleaved repeats)",
    )
    ap.add_argument(
        "--neighbour",
        action="store_true",
        help="run a busy-loop process beside the native runs (a core shared with other work)",
    )
    ap.add_argument(
        "--native-only", action="store_true", help="skip the baselines and the PPO runs"
    )
    ap.add_argument("--subproc-envs", type=int, default=4)
    ap.add_argument("--ppo-steps", type=int, default=3 * 4096, help="0 skips the PPO runs")
    ap.add_argument("--ppo-envs", type=int, default=64, help="native envs in the PPO run")
    ap.add_argument("--json", default="", help="also write the results to this file")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    results: dict[str, Any] = {"rules": args.rules, "repeats": args.repeats, "cpus": os.cpu_count()}

    from greed_env.vector.pool import default_threads

    threads = default_threads()
    results["threads"] = threads
    r = args.repeats
    bd = args.baseline_decisions
    nan = (float("nan"), float("nan"))
    if args.native_only:
        single = dummy = subproc = c4 = nan
    else:
        single = bench_single(args.rules, bd, r)
        dummy = bench_sb3("dummy", args.rules, 8, bd, r)
        subproc = bench_sb3("subproc", args.rules, args.subproc_envs, bd, r)
        c4 = bench_connect_four(bd, r)
    results["baselines"] = {
        "single_env_loop": single,
        "sb3_dummy_8": dummy,
        f"sb3_subproc_{args.subproc_envs}": subproc,
        "pettingzoo_connect_four_v3": c4,
    }
    bench_native(args.rules, 8, 80, 1, False, False)
    native: dict[str, tuple[float, float]] = {}
    ratios: dict[int, list[float]] = {}
    noise: dict[int, list[float]] = {}
    neighbour = _busy_neighbour() if args.neighbour else None
    try:
        for b in map(int, args.batches.split(",")):
            if args.threads and b >= 1024:
                one, many, ratios[b], noise[b] = bench_threads(
                    args.rules, b, args.decisions, r, threads
                )
                native[f"solitaire_race_{b}"] = one
                native[f"solitaire_race_{b}_{threads}_threads"] = many
            else:
                native[f"solitaire_race_{b}"] = bench_native(
                    args.rules, b, args.decisions, r, False, False
                )
        native["duel_threshold_4096"] = bench_native(
            args.rules, 4096, args.decisions, r, False, True
        )
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()
    results["native"] = native
    results["thread_ratios"] = {str(b): v for b, v in ratios.items()}
    results["noise_floor_ratios"] = {str(b): v for b, v in noise.items()}
    results["neighbour"] = args.neighbour
    if args.ppo_steps and not args.native_only:
        results["ppo"] = {
            f"native_{args.ppo_envs}": bench_ppo(
                "native", args.rules, args.ppo_envs, args.ppo_steps, r
            ),
            f"subproc_{args.subproc_envs}": bench_ppo(
                "subproc", args.rules, args.subproc_envs, args.ppo_steps, r
            ),
        }
    results["loadavg"] = [load0, os.getloadavg()[0]]

    print(
        f"rules {args.rules}; medians of {r}; {os.cpu_count()} cpus, {threads} threads; "
        f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f}"
        + ("; a busy-loop process beside the native runs" if args.neighbour else "")
    )
    print(
        f"{'run':<34}{'decisions/s':>14}{'per CPU-s':>14}{'vs single':>11}{'vs subproc':>12}{'vs c4':>9}"
    )

    def row(name: str, rate: tuple[float, float]) -> None:
        wall, cpu = rate
        print(
            f"{name:<34}{wall:>14,.0f}{cpu:>14,.0f}{wall / single[0]:>11.1f}"
            f"{wall / subproc[0]:>12.1f}{wall / c4[0]:>9.1f}"
        )

    for name, rate in results["baselines"].items():
        row(name, rate)
    for name, rate in native.items():
        row("native_" + name, rate)
    for b, rs in ratios.items():
        print(
            f"batch {b}: {threads} threads / one thread, per repeat: "
            + ", ".join(f"{x:.2f}" for x in rs)
            + f" (lowest {min(rs):.2f})"
        )
        print(
            f"batch {b}: noise floor, one thread after / before, per repeat: "
            + ", ".join(f"{x:.2f}" for x in noise[b])
        )
    if "ppo" in results:
        (n_name, n_rate), (s_name, s_rate) = results["ppo"].items()
        print(
            f"MaskablePPO steps/s: {n_name} {n_rate:,.0f}, {s_name} {s_rate:,.0f} "
            f"(ratio {n_rate / s_rate:.1f})"
        )
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
