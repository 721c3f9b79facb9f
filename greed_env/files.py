"""Writing files so that a reader never sees half of one: a temporary file beside the target,
then :func:`os.replace`.

Every run, card, model, table and report the package writes goes through these helpers, so
they all get the same permissions: ``0666`` less the process umask (``0644`` under the usual
umask 022), as ``open()`` would give, never the ``0600`` of a bare :func:`tempfile.mkstemp`.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_text(folder / "a.txt", "hello").read_text()
'hello'
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_with", "file_mode", "strict_json"]


def file_mode() -> int:
    """``0o666`` less the current umask: the mode a plainly created file would get."""
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


def atomic_write_with(path: str | os.PathLike[str], writer: Callable[[Path], Any]) -> Path:
    """Let ``writer(tmp)`` write a temporary file beside ``path``, flush it to disk, then move
    it into place with the mode of :func:`file_mode`.

    The folder is created when missing. On any error the temporary file is removed and
    ``path`` is left as it was.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer(tmp)
        _fsync(tmp)
        os.chmod(tmp, file_mode())
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def _fsync(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk before the rename)."""
    return atomic_write_with(path, lambda tmp: tmp.write_bytes(data))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def strict_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None, so that ``json.dumps(...,
    allow_nan=False)`` writes standard JSON (Python writes ``NaN``, which other readers refuse).

    >>> strict_json({"optimal": float("nan"), "rows": [1.5, float("inf")], "n": 3})
    {'optimal': None, 'rows': [1.5, None], 'n': 3}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value
