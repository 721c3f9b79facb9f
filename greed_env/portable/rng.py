"""A random generator that every language can reproduce draw for draw.

numpy's generators cannot be rebuilt outside numpy, so a game seeded in Python could not be
played again by a JavaScript, C# or GDScript host. :class:`PortableRng` is the generator of
the bot bundle's specification (docs/portable.md): **xoshiro128\\*\\*** on four 32-bit words,
seeded by **SplitMix64**, with bounded integers drawn by rejection. It offers the one method
the rules engine and the simple bots draw with, ``integers(high)``, so it can be passed
wherever a ``numpy.random.Generator`` is asked for by :func:`~greed_env.rules.sample_roll`,
:func:`~greed_env.rules.play.play_out` and :class:`~greed_env.bots.base.RandomBot`.

The algorithm, all arithmetic modulo 2**64 (seeding) or 2**32 (drawing):

* seeding: ``x = seed``; twice: ``x += 0x9E3779B97F4A7C15``, ``z = x``,
  ``z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9``, ``z = (z ^ (z >> 27)) * 0x94D049BB133111EB``,
  ``z ^= z >> 31``; the two outputs, low word first, are the state ``s0, s1, s2, s3``;
* a draw: ``out = rotl(s1 * 5, 7) * 9``; ``t = s1 << 9``; ``s2 ^= s0``; ``s3 ^= s1``;
  ``s1 ^= s2``; ``s0 ^= s3``; ``s2 ^= t``; ``s3 = rotl(s3, 11)``;
* ``integers(n)`` for ``1 <= n <= 2**32``: ``limit = 2**32 - (2**32 mod n)``; draw until
  ``out < limit``; return ``out mod n``.

A roll of ``k`` dice is ``integers(6**k)`` read as ``k`` base-6 digits (the rules engine's
:func:`~greed_env.rules.sample_roll`), so it is the same roll in every host.

>>> rng = PortableRng(7)
>>> [rng.next_u32() for _ in range(3)]
[1801096769, 1554325924, 2992800842]
>>> PortableRng(7).integers(6 ** 6)
35201
"""

from __future__ import annotations

from typing import Any

__all__ = ["PortableRng"]

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
MAX_SEED = _M64
"""Seeds are integers ``0 .. 2**64 - 1``."""


def _splitmix64(x: int) -> tuple[int, int]:
    """The next SplitMix64 state and its output."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return x, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


class PortableRng:
    """xoshiro128** seeded by SplitMix64: the bundle specification's generator.

    Args:
        seed: an integer ``0 .. 2**64 - 1``.

    Raises:
        ValueError: a seed that is not such an integer.
    """

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"a portable seed is an integer 0..2**64-1, got {seed!r}")
        self.seed = seed
        x, a = _splitmix64(seed)
        _, b = _splitmix64(x)
        self._s = [a & _M32, a >> 32, b & _M32, b >> 32]

    def next_u32(self) -> int:
        """The next 32-bit output."""
        s = self._s
        out = (_rotl((s[1] * 5) & _M32, 7) * 9) & _M32
        t = (s[1] << 9) & _M32
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 11)
        return out

    def integers(self, low: int, high: int | None = None, size: Any = None) -> int:
        """A uniform integer in ``[0, low)`` (numpy's one-argument form) or ``[low, high)``.

        Raises:
            ValueError: an empty range, one wider than 2**32, or a ``size`` (one draw only).
        """
        if size is not None:
            raise ValueError("PortableRng draws one integer at a time (size must be None)")
        lo, hi = (0, int(low)) if high is None else (int(low), int(high))
        n = hi - lo
        if not 1 <= n <= 1 << 32:
            raise ValueError(f"cannot draw from [{lo}, {hi}): the range holds 1..2**32 integers")
        limit = (1 << 32) - ((1 << 32) % n)
        while True:
            x = self.next_u32()
            if x < limit:
                return lo + x % n

    def __repr__(self) -> str:
        return f"PortableRng(seed={self.seed})"
