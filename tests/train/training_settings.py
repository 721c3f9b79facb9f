"""Tiny settings of the training tests, and the scripts as modules (imported by the test files
of this folder).

* :data:`TINY`: any PPO script runs two updates of 128 decisions with a 16-unit network and a
  few evaluation episodes (seconds of CPU);
* :data:`SHORT_RULES`: a 3,000-point ten_thousand whose tables solve in a moment;
* :func:`load_script`: ``training/NAME.py`` as the module ``greed_env.training.NAME`` (the tests'
  editable install maps the package to ``training/``), for a test to call its ``main``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def load_script(name: str) -> ModuleType:
    """The training script ``training/NAME.py`` as a module."""
    return importlib.import_module(f"greed_env.training.{name}")


SHORT_RULES = ["target=3000", "entry_threshold=500"]

TINY: dict[str, Any] = {
    "total_timesteps": 256,
    "num_envs": 4,
    "num_steps": 32,
    "minibatch_size": 64,
    "update_epochs": 1,
    "net_width": 16,
    "net_depth": 1,
    "eval_every": 128,
    "eval_episodes": 8,
    "eval_regret_episodes": 0,
    "final_eval_episodes": 16,
    "checkpoint_every": 128,
    "progress": False,
}
"""Two updates of 4 environments x 32 steps; evaluations at steps 0, 128 and the end."""
