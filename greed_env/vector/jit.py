"""The numba decorators of the vector kernels, with one cache stamp for all their modules.

The kernels are compiled without numba's reference-counting runtime (``_nrt=False``: they
never allocate), since atomic reference counts on every array argument of every call cost more
than the game logic itself, and release the GIL (``nogil``) for the thread pool.

numba's on-disk cache checks only the source file of the function it compiled, so the kernels'
cache entries are stamped with one digest of every kernel module's source and of every layout
constant (:func:`group_stamp`, through :mod:`greed_env.jit_cache`): a change to any of them
recompiles all of them.
"""

from __future__ import annotations

from pathlib import Path

from numba import njit

from greed_env import jit_cache
from greed_env.vector import layout

KERNEL_MODULES = (
    "layout",
    "jit",
    "lookup",
    "game",
    "policies",
    "observe",
    "rewards",
    "episodes",
    "batch",
    "threads",
)
"""The modules of :mod:`greed_env.vector` whose kernels share a cache stamp."""

group_stamp = jit_cache.module_group(
    Path(__file__).resolve().parent,
    KERNEL_MODULES,
    lambda: repr(sorted(layout.constants().items())).encode(),
)
"""Digest of the kernel modules' sources and the layout constants."""

kernel = njit(cache=True, nogil=True, _nrt=False)
"""The decorator of every kernel (they release the GIL, so that :mod:`greed_env.vector.pool`
runs row ranges of one batch on several threads)."""

inlined = njit(cache=True, nogil=True, _nrt=False, inline="always")
"""The decorator of the per-row helpers that numba inlines into their callers' IR: a call
between compiled kernels passes every array as its unpacked fields (seven scalars each)."""
