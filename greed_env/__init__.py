"""greed_env: the 10,000 dice-game family for reinforcement learning.

* :mod:`greed_env.rules` - the pure game (presets, scoring, moves, chance).
* :mod:`greed_env.envs` - Gymnasium and PettingZoo environments.
* :mod:`greed_env.solver` - exact dynamic-programming solutions.
* :mod:`greed_env.bots` - the bot protocol, registry and portable bots.
"""

from greed_env import envs
from greed_env.rules import Rules, RulesError, preset, preset_names

__version__ = "0.2.0"

__all__ = ["Rules", "RulesError", "__version__", "envs", "preset", "preset_names"]
