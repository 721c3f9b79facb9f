"""numba's on-disk cache, stamped by a whole group of modules instead of one source file.

numba checks only the source file of the function it compiled, so a compiled function that
calls (and inlines) a function of another module keeps a stale copy of it after that other
module changes, until its own file changes too. A group registered here
(:func:`stamp_group`) stamps the cache entries of every function defined in its files with one
digest of all of them: a change to any recompiles every one. The vector engine's kernels
(:mod:`greed_env.vector.jit`) and the solver's (:mod:`greed_env.solver`) are such groups.

A group must be registered before its functions are decorated (``njit(cache=True)`` picks the
cache's locator then); functions of files in no group keep numba's own per-file stamp.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba.core import caching

__all__ = ["file_digest", "module_group", "stamp_group", "stamp_of"]

_STAMPS: dict[str, Callable[[], Any]] = {}
"""Resolved path of a grouped file -> its group's stamp."""


def file_digest(paths: Iterable[Path], extra: bytes = b"") -> str:
    """One sha256 digest of the files' bytes (in sorted order of their paths) and ``extra``."""
    digest = hashlib.sha256()
    for path in sorted(str(Path(p).resolve()) for p in paths):
        digest.update(Path(path).read_bytes())
    digest.update(extra)
    return digest.hexdigest()


def stamp_group(paths: Iterable[Path], stamp: Callable[[], Any]) -> None:
    """Stamp the cache entries of every function defined in ``paths`` with ``stamp()``."""
    _install_locators()
    for path in paths:
        _STAMPS[str(Path(path).resolve())] = stamp


def module_group(folder: Path, modules: Iterable[str], extra: Callable[[], bytes] = bytes) -> Callable[[], str]:
    """Register the modules ``folder/NAME.py`` as one group stamped by the digest of their
    sources and ``extra()`` (read when first asked, then kept); returns that stamp."""
    paths = frozenset(Path(folder) / f"{name}.py" for name in modules)

    @lru_cache(maxsize=1)
    def group_stamp() -> str:
        """Digest of the group's sources (and its extra bytes)."""
        return file_digest(paths, extra())

    stamp_group(paths, group_stamp)
    return group_stamp


def stamp_of(path: str | Path) -> Callable[[], Any] | None:
    """The stamp of the group ``path`` belongs to (None: numba's per-file stamp)."""
    return _STAMPS.get(str(Path(path).resolve()))


def _grouped(base: type) -> type:
    """``base`` (a numba cache locator) for the grouped files alone, stamped by their group."""

    class Grouped(base):  # type: ignore[misc,valid-type]
        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            stamp = stamp_of(py_file)
            if stamp is None:
                return None
            locator = super().from_function(py_func, py_file)
            if locator is not None:
                locator._group_stamp = stamp
            return locator

        def get_source_stamp(self) -> Any:
            return self._group_stamp()

    Grouped.__name__ = f"Grouped{base.__name__}"
    return Grouped


def _install_locators() -> None:
    """Put the grouped locators first (numba keeps its own for every other function); with a
    numba that has no such list every function keeps numba's per-file stamp."""
    impl = getattr(caching, "CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):
        return
    if any(getattr(c, "__name__", "").startswith("Grouped") for c in classes):
        return
    wanted = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [c for c in classes if c.__name__ in wanted]
    classes[:0] = [_grouped(b) for b in bases]
