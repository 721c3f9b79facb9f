"""Bots outside Python: the bot bundle, the portable generator, positions as JSON and the
conformance vectors that any host checks itself against (docs/portable.md)."""

from greed_env.portable.bundle import (
    BUNDLE_FORMAT,
    BUNDLE_VERSION,
    BundleError,
    bundle_for,
    check_bundle,
    write_bundle,
)
from greed_env.portable.rng import PortableRng
from greed_env.portable.state_json import state_from_json, state_to_json

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "BundleError",
    "PortableRng",
    "bundle_for",
    "check_bundle",
    "state_from_json",
    "state_to_json",
    "write_bundle",
]
