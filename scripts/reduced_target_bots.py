"""The trained ten_thousand bots, made to play ten_thousand at a reduced target.

``ten_thousand/ffa3-exact`` plays to 3,000 points (its exact three-player table is shippable
there, not at 10,000), and the loader refuses a trained bot on rules other than its own. These
factories load a trained bot as it ships and let it play the rules it is given: its
observation is encoded from those rules (scores and the target the game really has), its
action catalog is the same (six dice either way). The bots were trained for 10,000 points, so
this measures them out of their training distribution; docs/three-player.md says so beside
every number. Use them through a ``py:`` spec::

    greed benchmark ten_thousand/ffa3-exact --bot py:scripts/reduced_target_bots.py:ppo_turn --trust-code
"""

from __future__ import annotations

from typing import Any

import numpy as np

from greed_env.bots import load
from greed_env.rules import Move, Rules, State, preset
from greed_env.spaces.observation import encode_observation


class ForeignRulesBot:
    """A trained bot (an ``OnnxBot``) playing ``rules`` of the same dice as its own."""

    def __init__(self, spec: str, rules: Rules) -> None:
        self.inner = load(spec)
        own: Rules = self.inner.rules
        if (own.num_dice, own.name) != (rules.num_dice, rules.name):
            raise ValueError(f"{spec} plays {own.name} with {own.num_dice} dice, not {rules.name} with {rules.num_dice}")
        self.rules = rules
        self.name = f"{spec}@{rules.target}"

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        mask, moves = self.inner.catalog.legal(state)
        return moves[self.inner.act_obs(encode_observation(rules, state), mask, rng)]


def _make(spec: str, rules: Any) -> ForeignRulesBot:
    return ForeignRulesBot(spec, rules if rules is not None else preset("ten_thousand", target=3000))


def ppo_turn(rules: Rules | None = None) -> ForeignRulesBot:
    return _make("ten_thousand/ppo-turn", rules)


def ppo_duel(rules: Rules | None = None) -> ForeignRulesBot:
    return _make("ten_thousand/ppo-duel", rules)


def rllib_selfplay(rules: Rules | None = None) -> ForeignRulesBot:
    return _make("ten_thousand/rllib-selfplay", rules)
