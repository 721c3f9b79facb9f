"""The solver's numba kernels share one cache stamp (:mod:`greed_env.jit_cache`).

A kernel inlines what it calls from another kernel module (the carry-over duel's passes call
:mod:`~greed_env.solver.lane_kernel` and :mod:`~greed_env.solver.lane_simd`, the lean penalty
passes call :mod:`~greed_env.solver.kernels`), and numba's own cache checks only the caller's
file: a changed callee would run stale. :mod:`greed_env.solver` imports this module before any
kernel module, so every kernel's cache entry carries one digest of all of them.
"""

from __future__ import annotations

from pathlib import Path

from greed_env import jit_cache

__all__ = ["KERNEL_MODULES", "group_stamp"]

KERNEL_MODULES = (
    "kernels",
    "carry_kernels",
    "lane_kernel",
    "lane_simd",
    "level_kernels",
    "penalty_passes",
    "rounds",
    "three_kernels",
)
"""The modules of :mod:`greed_env.solver` that define or inline numba kernels."""

group_stamp = jit_cache.module_group(Path(__file__).resolve().parent, KERNEL_MODULES)
"""Digest of the solver's kernel modules' sources."""
