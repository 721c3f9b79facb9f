"""The name and version of the bot bundle format (:mod:`greed_env.portable.bundle`).

They live with the formats the bundle is made of (the action catalog and the observation), below
the bots, so that a bot card can name the bundle version it plays with (``bundle_version``) and
a host in another language can refuse a bot of another version (docs/portable.md).
"""

from __future__ import annotations

__all__ = ["BUNDLE_FORMAT", "BUNDLE_VERSION"]

BUNDLE_FORMAT = "greed_env.bot_bundle"
BUNDLE_VERSION = 1
"""Bumped whenever a key of the bundle, or what a host must do with it, changes."""
