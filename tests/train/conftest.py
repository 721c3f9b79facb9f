"""The scripts of ``training/`` as fixtures (``ppo_turn``, ``ppo_duel``, ``ppo_selfplay``,
``progressive_race``, ``rllib_selfplay``), imported as the modules of the package
``greed_env.training`` (:func:`training_settings.load_script`); their tiny settings are in
``training_settings.py``.
"""

from __future__ import annotations

from types import ModuleType

import pytest
from training_settings import load_script


@pytest.fixture(scope="session")
def ppo_turn() -> ModuleType:
    return load_script("ppo_turn")


@pytest.fixture(scope="session")
def ppo_duel() -> ModuleType:
    return load_script("ppo_duel")


@pytest.fixture(scope="session")
def ppo_selfplay() -> ModuleType:
    return load_script("ppo_selfplay")


@pytest.fixture(scope="session")
def progressive_race() -> ModuleType:
    return load_script("progressive_race")


@pytest.fixture(scope="session")
def rllib_selfplay() -> ModuleType:
    return load_script("rllib_selfplay")
