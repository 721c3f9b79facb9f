"""greed_env: the 10,000 dice-game family for reinforcement learning.

* :mod:`greed_env.rules` - the pure game (presets, scoring, moves, chance).
* :mod:`greed_env.envs` - Gymnasium and PettingZoo environments.
* :mod:`greed_env.spaces` - the action catalog and the observation every policy reads.
* :mod:`greed_env.solver` - exact dynamic-programming solutions.
* :mod:`greed_env.bots` - the bot protocol, registry and portable bots.

Importing the package loads the pure game only (``import greed_env.rules`` loads neither
Gymnasium nor the environments); the other parts import on first use (``greed_env.envs``).
The Gymnasium ids ``greed_env/Solitaire-v0`` and ``greed_env/Duel-v0`` are registered as soon
as both this package and Gymnasium are imported, in either order, so
``import greed_env; gym.make("greed_env/Solitaire-v0")`` works as before.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from greed_env.rules import Rules, RulesError, preset, preset_names

__version__ = "0.2.0"

__all__ = ["Rules", "RulesError", "__version__", "envs", "preset", "preset_names"]

_PARTS = frozenset(
    {
        "abilities",
        "benchmark",
        "bots",
        "envs",
        "evaluation",
        "pettingzoo",
        "portable",
        "rllib",
        "solver",
        "spaces",
        "train",
        "vector",
    }
)


def __getattr__(name: str) -> ModuleType:
    """``greed_env.envs`` and the other parts, imported when first asked for."""
    if name in _PARTS:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _register_envs() -> None:
    """Import the environments, which register their ids; when they are being imported
    already (they imported Gymnasium), they register at the end of their own import."""
    if f"{__name__}.envs" not in sys.modules:
        importlib.import_module(f"{__name__}.envs")


class _OnGymnasiumImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Registers the environment ids right after Gymnasium's own ``__init__`` has run, when
    Gymnasium is imported after this package; it leaves the import system as it found it."""

    def __init__(self) -> None:
        self._loader: Any = None

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _register_envs()


if "gymnasium" in sys.modules:
    _register_envs()
elif not any(isinstance(f, _OnGymnasiumImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _OnGymnasiumImport())
