"""PettingZoo environments: :mod:`greed_env.pettingzoo.greed_v0` (AEC, 1..8 players).

Import the environment module itself (this package imports nothing on its own):

>>> from greed_env.pettingzoo import greed_v0
>>> env = greed_v0.env(rules="ten_thousand", num_players=3)
>>> env.reset(seed=0)
>>> env.agents
['player_0', 'player_1', 'player_2']
"""

__all__ = ["greed_v0"]
