"""Step a Gymnasium environment by hand: look at the dice, pick a legal action, read the reward.

    python examples/step_env_by_hand.py
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import greed_env  # noqa: F401  (registers the greed_env/* ids)
from greed_env.rules import preset
from greed_env.spaces import ActionCatalog


def main() -> None:
    rules = preset("ten_thousand")
    catalog = ActionCatalog(rules)
    env = gym.make("greed_env/Solitaire-v0", rules=rules, objective="turn", render_mode="ansi")
    _, info = env.reset(seed=7)
    rng = np.random.default_rng(7)
    total = 0.0
    for step in range(50):
        print(env.render())
        legal = np.flatnonzero(info["action_mask"])
        names = [catalog.entries[int(a)].label for a in legal]
        print(f"step {step}: legal actions {dict(zip(legal.tolist(), names, strict=True))}")
        action = int(rng.choice(legal))
        _obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        print(f"  took {action} -> reward {reward:+.3f}")
        if terminated or truncated:
            break
    print(f"episode return {total:+.3f} (points banked / 1000)")
    env.close()


if __name__ == "__main__":
    main()
