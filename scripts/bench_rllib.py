"""Sampling throughput of Ray RLlib self-play on this machine, beside the native engine's.

Measures, in one run, agent steps (decisions) per second of wall-clock time, the median of
``--repeats`` sample calls, for:

* the PettingZoo game ``greed_v0`` stepped in a Python loop with random legal actions (what
  every RLlib env runner steps, without RLlib);
* the native engine (:class:`greed_env.vector.BatchGame`) playing the same game at random, all
  seats, ``--native-batches`` games at a time;
* RLlib's ``MultiAgentEnvRunner`` sampling with the shared masked PPO policy, 1 and 2 remote
  env runners (``--runners``), each stepping

  - ``greed_v0`` games, ``--envs-per-runner`` per runner (RLlib's own multi-agent
    vectorisation: ``SyncVectorMultiAgentEnv``, a Python loop over separate envs), and
  - ``NativeSelfPlayEnv`` (``greed_env.rllib.native``): ``--native-games`` games of the
    native engine in one multi-agent env, stepped together by the kernels.

Ratios are against the first RLlib row (1 runner, one ``greed_v0`` per runner), measured in
the same run. Each RLlib row builds its algorithm, samples once to warm up, then times
``--repeats`` parallel sample calls of at least ``--steps`` agent steps per runner. The load
average is printed; on a shared machine every figure moves with it.

    python scripts/bench_rllib.py --rules ten_thousand --num-players 3 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np

from greed_env.files import atomic_write_text


def _pick(masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise uniform choice among the unmasked actions of each row."""
    counts = masks.sum(axis=1)
    k = (u * counts).astype(np.int64)
    return np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1)


def bench_pettingzoo(rules: str, players: int, steps: int, repeats: int) -> float:
    """Agent steps/s of ``greed_v0`` in a Python loop, random legal actions."""
    from greed_env.pettingzoo import greed_v0

    env = greed_v0.env(rules=rules, num_players=players)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
        rates.append(steps / (time.perf_counter() - t))
    return statistics.median(rates)


def bench_native(rules: str, players: int, batch: int, steps: int, repeats: int) -> float:
    """Agent steps/s of the native engine, every seat playing random legal actions."""
    from greed_env.rules import Phase
    from greed_env.vector import BatchGame

    game = BatchGame(rules, batch, players)
    rng = np.random.default_rng(0)
    high = 6**game.rules.num_dice

    def play(decisions: int) -> int:
        done = 0
        while done < decisions:
            over = game.phase == Phase.OVER
            if over.any():
                game.new_games(rows=over)
            while (chance := game.chance_rows()).any():
                game.apply_rolls(rng.integers(0, high, size=batch, dtype=np.int64), chance)
            acting = game.decision_rows()
            game.apply_actions(_pick(game.masks(), rng.random(batch)), acting)
            game.observations()
            done += int(acting.sum())
        return done

    play(batch)
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        n = play(steps)
        rates.append(n / (time.perf_counter() - t))
    return statistics.median(rates)


def bench_rllib(
    rules: str, players: int, runners: int, envs: int, native_games: int, steps: int, repeats: int
) -> float:
    """Agent steps/s of RLlib sampling with ``runners`` remote env runners."""
    from greed_env.rllib.config import selfplay_config

    config = selfplay_config(
        {"rules": rules, "num_players": players},
        num_env_runners=runners,
        num_envs_per_env_runner=envs,
        native_games=native_games,
        train_batch_size=steps,
        minibatch_size=min(steps, 500),
    )
    algo = config.build_algo()

    def sample() -> int:
        results = algo.env_runner_group.foreach_env_runner(
            lambda r: sum(e.agent_steps() for e in r.sample(num_timesteps=steps)),
            local_env_runner=False,
        )
        return int(sum(results))

    try:
        sample()
        rates = []
        for _ in range(repeats):
            t = time.perf_counter()
            n = sample()
            rates.append(n / (time.perf_counter() - t))
    finally:
        algo.stop()
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="ten_thousand")
    p.add_argument("--num-players", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=4000, help="agent steps per runner per timed call")
    p.add_argument("--runners", default="1,2", help="comma-separated remote env runner counts")
    p.add_argument("--envs-per-runner", default="1,16", help="greed_v0 envs per runner")
    p.add_argument("--native-games", type=int, default=64, help="games per NativeSelfPlayEnv (0: skip)")
    p.add_argument("--native-batches", default="64,4096", help="batch sizes of the native engine")
    p.add_argument("--baseline-steps", type=int, default=20_000)
    p.add_argument("--out", default=None, help="write the figures as JSON here")
    a = p.parse_args(argv)
    import ray

    runners = [int(x) for x in a.runners.split(",")]
    ray.init(num_cpus=max(runners) + 1, include_dashboard=False, log_to_driver=False)
    rows: list[tuple[str, float]] = []
    load_before = os.getloadavg()
    try:
        for r in runners:
            for envs in (int(x) for x in a.envs_per_runner.split(",")):
                rate = bench_rllib(a.rules, a.num_players, r, envs, 0, a.steps, a.repeats)
                rows.append((f"RLlib, {r} runner(s), {envs} greed_v0 env(s) each", rate))
                print(f"{rows[-1][0]}: {rate:,.0f}", flush=True)
            if a.native_games:
                rate = bench_rllib(a.rules, a.num_players, r, 1, a.native_games, a.steps, a.repeats)
                rows.append((f"RLlib, {r} runner(s), NativeSelfPlayEnv of {a.native_games} games each", rate))
                print(f"{rows[-1][0]}: {rate:,.0f}", flush=True)
    finally:
        ray.shutdown()
    rows.append((
        "greed_v0 in a Python loop, random legal play (no RLlib)",
        bench_pettingzoo(a.rules, a.num_players, a.baseline_steps, a.repeats),
    ))
    for batch in (int(x) for x in a.native_batches.split(",")):
        rows.append((
            f"native engine, batch {batch}, random legal play (no RLlib)",
            bench_native(a.rules, a.num_players, batch, max(a.baseline_steps, 20 * batch), a.repeats),
        ))
    load_after = os.getloadavg()
    base = rows[0][1]
    print(f"\nload average before {load_before[0]:.1f}, after {load_after[0]:.1f}; "
          f"{a.rules}, {a.num_players} players, medians of {a.repeats}\n")
    print("| sampler | agent steps/s | vs RLlib 1 runner, 1 env |")
    print("|---|---:|---:|")
    for name, rate in rows:
        print(f"| {name} | {rate:,.0f} | {rate / base:.2f} |")
    result = {
        "args": vars(a),
        "load_average": [load_before[0], load_after[0]],
        "rows": [{"sampler": n, "agent_steps_per_s": r, "ratio": r / base} for n, r in rows],
    }
    if a.out:
        atomic_write_text(a.out, json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
