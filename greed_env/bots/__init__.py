"""Bots: the protocol, built-in bots and (later) the registry of trained and optimal bots."""

from greed_env.bots.base import Bot, ObservationBot, RandomBot, ThresholdBot

__all__ = ["Bot", "ObservationBot", "RandomBot", "ThresholdBot"]
