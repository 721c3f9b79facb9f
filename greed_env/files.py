"""Writing files so that a reader never sees half of one: a temporary file beside the target,
then :func:`os.replace`.

Every run, card, model, table and report the package writes goes through these helpers, so
they all get the same permissions: ``0666`` less the process umask (``0644`` under the usual
umask 022), as ``open()`` would give, never the ``0600`` of a bare :func:`tempfile.mkstemp`.

The rename replaces whatever lies at the target, so the writers first refuse a target that is
not a regular file (:func:`check_target`: a device such as ``/dev/full``, a pipe, a socket, a
folder) and a file name longer than the file system takes. :func:`folder_problem` says, before
any work, why a folder cannot take a new file (it tries: permission bits do not tell on
read-only or special file systems). The temporary files of writes in progress are listed, so a
process that must end at once removes them (:func:`discard_pending`).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_text(folder / "a.txt", "hello").read_text()
'hello'
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "NotRegularFileError",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_with",
    "check_target",
    "discard_pending",
    "file_mode",
    "folder_problem",
    "name_problem",
    "strict_json",
]

_PENDING: set[Path] = set()
_PENDING_LOCK = threading.Lock()
_TMP_STEM = 64  # characters of the target's name kept in its temporary file's name


class NotRegularFileError(OSError):
    """An existing target that is not a regular file (a device, pipe, socket or folder): the
    writers refuse to replace it."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _name_max(folder: Path) -> int:
    """The longest file name (in bytes) the file system holding ``folder`` (or its nearest
    existing parent) takes; 255 where it does not say."""
    for part in (folder, *folder.parents):
        try:
            return int(os.pathconf(part, "PC_NAME_MAX"))
        except (OSError, ValueError):
            continue
    return 255


def name_problem(path: str | os.PathLike[str]) -> str:
    """Why ``path`` cannot be a file name here: a part of it longer than the file system takes
    (``''`` when every part fits).

    >>> name_problem("x" * 300 + ".json")
    'file name too long: 305 bytes, at most 255'
    >>> name_problem("runs/a.json")
    ''
    """
    p = Path(os.path.abspath(path))
    limit = _name_max(p.parent)
    for part in p.parts:
        size = len(os.fsencode(part))
        if size > limit:
            return f"file name too long: {size} bytes, at most {limit}"
    return ""


def check_target(path: str | os.PathLike[str]) -> Path:
    """Refuse a target the writers must not replace, before anything is written.

    Raises:
        NotRegularFileError: ``path`` exists (a link is followed) and is not a regular file.
        OSError: a name longer than the file system takes (``errno.ENAMETOOLONG``).
    """
    p = Path(path)
    why = name_problem(p)
    if why:
        raise OSError(errno.ENAMETOOLONG, why, os.fspath(path))
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        return p
    except NotADirectoryError:
        return p  # a file on the way: creating the folder says so
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(f"{os.fspath(path)} is {_kind(mode)}, not a regular file: refusing to replace it")
    return p


def folder_problem(folder: str | os.PathLike[str]) -> str:
    """Why a new file cannot be made in ``folder`` (``''`` when it can).

    A missing folder is judged by its nearest existing parent, where it would be created; a file
    on the way is a problem. Writability is tried with a temporary file (removed at once), since
    permission bits do not tell on read-only or special file systems (``/sys``, ``/proc``).
    """
    p = Path(os.path.abspath(folder))
    why = name_problem(p)
    if why:
        return why
    for part in (p, *p.parents):
        if part.exists():
            break
    if not part.is_dir():
        return f"{part} is a file, not a folder"
    try:
        fd, name = tempfile.mkstemp(dir=part, prefix=".greed-probe-")
    except OSError as exc:
        return f"cannot write in {part}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(name)
    return ""


def discard_pending() -> list[Path]:
    """Remove the temporary files of the atomic writes still in progress and return them: a
    process about to end at once (Ctrl-C during compiled work) calls this, so that no
    half-written file stays behind. The targets themselves are untouched."""
    with _PENDING_LOCK:
        pending = list(_PENDING)
    for tmp in pending:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return pending


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

    Raises:
        NotRegularFileError: ``path`` exists and is not a regular file (:func:`check_target`).
        OSError: the folder cannot be made or written, a name too long, or ``writer``'s own.
    """
    p = check_target(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name[:_TMP_STEM]}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    with _PENDING_LOCK:
        _PENDING.add(tmp)
    try:
        writer(tmp)
        _fsync(tmp)
        os.chmod(tmp, file_mode())
        check_target(p)  # a device made there meanwhile is not replaced either
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        with _PENDING_LOCK:
            _PENDING.discard(tmp)
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
