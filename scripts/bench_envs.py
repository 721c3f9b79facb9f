"""Steps per second of the greed_env environments under random legal play.

Every environment is driven the same way: the action is drawn uniformly from the legal mask
with a seeded ``numpy`` Generator, episodes are reset as they end, and each repeat runs for a
fixed wall-clock time. The PettingZoo loop is the one of ``pettingzoo.test.performance_benchmark``
(``agent_iter`` over all agents, ``last()``, a dead agent steps with None, reset when every agent
is done), reimplemented to return a number and to use the seeded Generator; it runs in the same
process on ``connect_four_v3`` as the reference, and the table gives each env's ratio to it.
Repeats are interleaved (one round over every environment, then the next) so that a change in
the machine's load touches all of them alike.

Usage::

    python scripts/bench_envs.py                   # defaults: 5 repeats of 2 s
    python scripts/bench_envs.py --repeats 7 --seconds 3 --presets ten_thousand progressive

Prints a Markdown table of medians (and min..max) per environment.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import greed_env
from greed_env.pettingzoo import greed_v0


def _pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def gym_steps_per_second(make: Callable[[], gym.Env], seconds: float, seed: int) -> float:
    """``env.step`` calls per second, resets excluded from the count but not from the time."""
    env = make()
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(256):
            _, _, terminated, truncated, info = env.step(_pick(info["action_mask"], rng))
            steps += 1
            if terminated or truncated:
                _, info = env.reset()
        now = time.perf_counter()
        if now >= deadline:
            break
    env.close()
    return steps / (now - start)


def aec_turns_per_second(make: Callable[[], Any], seconds: float, seed: int) -> float:
    """``performance_benchmark``'s loop: ``env.step`` calls (None steps included) per second."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    turns = 0
    start = time.perf_counter()
    while True:
        for _agent in env.agent_iter(env.num_agents):
            obs, _, termination, truncation, _ = env.last()
            action = None if termination or truncation else _pick(obs["action_mask"], rng)
            env.step(action)
            turns += 1
            if all(env.terminations.values()) or all(env.truncations.values()):
                env.reset()
        now = time.perf_counter()
        if now - start > seconds:
            break
    env.close()
    return turns / (now - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per environment")
    parser.add_argument("--seconds", type=float, default=2.0, help="wall-clock seconds per repeat")
    parser.add_argument(
        "--presets",
        nargs="+",
        default=["ten_thousand", "progressive"],
        help="rules presets to time",
    )
    args = parser.parse_args(argv)

    from pettingzoo.classic import connect_four_v3

    cases: list[tuple[str, str, Callable[[float, int], float]]] = []
    for name in args.presets:
        cases += [
            (
                f"Solitaire-v0 {name} turn",
                "gym",
                lambda s, seed, n=name: gym_steps_per_second(
                    lambda: gym.make("greed_env/Solitaire-v0", rules=n, objective="turn"), s, seed
                ),
            ),
            (
                f"Solitaire-v0 {name} race",
                "gym",
                lambda s, seed, n=name: gym_steps_per_second(
                    lambda: gym.make("greed_env/Solitaire-v0", rules=n, objective="race"), s, seed
                ),
            ),
            (
                f"Duel-v0 {name} vs random",
                "gym",
                lambda s, seed, n=name: gym_steps_per_second(
                    lambda: gym.make("greed_env/Duel-v0", rules=n, opponent="random"), s, seed
                ),
            ),
            (
                f"greed_v0 {name} 2 players",
                "aec",
                lambda s, seed, n=name: aec_turns_per_second(
                    lambda: greed_v0.env(rules=n, num_players=2), s, seed
                ),
            ),
        ]
    cases.append(
        (
            "connect_four_v3 (reference)",
            "aec",
            lambda s, seed: aec_turns_per_second(connect_four_v3.env, s, seed),
        )
    )
    samples: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for r in range(args.repeats):
        for label, _, fn in cases:
            samples[label].append(fn(args.seconds, 1000 + r))
    results = {k: (statistics.median(v), min(v), max(v)) for k, v in samples.items()}
    ref = results["connect_four_v3 (reference)"][0]
    print(
        f"greed_env {greed_env.__version__}, Python {platform.python_version()}, "
        f"{args.repeats} repeats x {args.seconds:g} s, medians\n"
    )
    print("| environment | API | steps/s (median) | min..max | ratio to connect_four_v3 |")
    print("|---|---|---|---|---|")
    for label, api, _ in cases:
        med, lo, hi = results[label]
        print(f"| {label} | {api} | {med:,.0f} | {lo:,.0f}..{hi:,.0f} | {med / ref:.2f} |")


if __name__ == "__main__":
    main()
