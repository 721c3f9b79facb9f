"""The numba decorators of the vector kernels, with one cache stamp for all their modules.

The kernels are compiled without numba's reference-counting runtime (``_nrt=False``: they
never allocate), since atomic reference counts on every array argument of every call cost more
than the game logic itself, and release the GIL (``nogil``) for the thread pool.

numba's on-disk cache checks only the source file of the function it compiled, so a kernel in
one module would keep calling a stale copy of a kernel of another module, or a stale layout
constant, after that other file changed. The kernels' cache entries are therefore stamped with
one digest of every kernel module's source and of every layout constant
(:func:`group_stamp`): a change to any of them recompiles all of them.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba import njit
from numba.core import caching

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

_HERE = Path(__file__).resolve().parent
_GROUP = frozenset(str(_HERE / f"{name}.py") for name in KERNEL_MODULES)


@lru_cache(maxsize=1)
def group_stamp() -> str:
    """Digest of the kernel modules' sources and the layout constants."""
    digest = hashlib.sha256()
    for path in sorted(_GROUP):
        digest.update(Path(path).read_bytes())
    digest.update(repr(sorted(layout.constants().items())).encode())
    return digest.hexdigest()


def _grouped(base: type) -> type:
    """``base`` (a numba cache locator) for the kernel modules alone, stamped by the group."""

    class Grouped(base):  # type: ignore[misc,valid-type]
        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if str(Path(py_file).resolve()) not in _GROUP:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self) -> Any:
            return group_stamp()

    Grouped.__name__ = f"VectorKernels{base.__name__}"
    return Grouped


def _install_locators() -> None:
    """Put the grouped locators first (numba keeps its own for every other function); with a
    numba that has no such list the kernels keep numba's per-file stamps."""
    impl = getattr(caching, "CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):
        return
    if any(getattr(c, "__name__", "").startswith("VectorKernels") for c in classes):
        return
    wanted = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [c for c in classes if c.__name__ in wanted]
    classes[:0] = [_grouped(b) for b in bases]


_install_locators()

kernel = njit(cache=True, nogil=True, _nrt=False)
"""The decorator of every kernel (they release the GIL, so that :mod:`greed_env.vector.pool`
runs row ranges of one batch on several threads)."""
