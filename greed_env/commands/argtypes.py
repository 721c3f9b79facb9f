"""Argument types shared by the sub-commands: numbers in range and output paths.

Each ``type=`` converter raises :class:`argparse.ArgumentTypeError`, which the ``greed``
parser turns into one line naming the flag and exiting with status 2, e.g.
``greed play: argument --seed: must be an integer >= 0, got '-1'``. The output-path checks
run before a command starts its work, so a bad ``--out`` or ``--record`` is refused at once.

>>> nonneg_int("7")
7
>>> positive_float("1e-9")
1e-09
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path

from greed_env.cluster import ClusterError, check_address
from greed_env.files import check_target, folder_problem, name_problem
from greed_env.rules.config import parse_sets

__all__ = [
    "MAX_SEED",
    "OutputPathError",
    "add_address_option",
    "check_output_dir",
    "check_output_file",
    "cluster_address",
    "int_at_least",
    "nonneg_int",
    "parse_sets",
    "positive_float",
    "positive_int",
    "seed_int",
]

MAX_SEED = 2**63 - 1
"""Largest seed the commands take (numpy's generators accept any non-negative integer; this
bound keeps seeds representable in the int64 columns of reports)."""


class OutputPathError(ValueError):
    """An output path that cannot be written as asked (a folder where a file is wanted, ...)."""


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """A converter accepting whole numbers in ``low..high`` (``high`` None: no upper bound)."""

    def convert(text: str) -> int:
        value = _int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be an integer <= {high}, got {text!r}")
        return value

    convert.__name__ = "int"
    return convert


nonneg_int = int_at_least(0)
positive_int = int_at_least(1)
seed_int = int_at_least(0, MAX_SEED)


def cluster_address(text: str) -> str:
    """A Ray cluster's address: ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT``
    (:func:`greed_env.cluster.check_address`)."""
    try:
        return check_address(text)
    except ClusterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_address_option(parser: argparse.ArgumentParser, work: str) -> None:
    """``--address``: run ``work`` on a Ray cluster instead of this machine's processes."""
    parser.add_argument(
        "--address",
        type=cluster_address,
        default=None,
        metavar="ADDRESS",
        help=f"run the {work} as tasks of a Ray cluster: auto (the cluster this machine belongs to), "
        "ray://HOST:PORT (Ray Client) or HOST:PORT (a head node); --workers is then not used, the "
        "results are the same (docs/scale.md; needs the ray extra)",
    )


def positive_float(text: str) -> float:
    """A finite number > 0 (tolerances, scales)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def check_output_file(path: str | os.PathLike[str], flag: str, suffixes: tuple[str, ...] = ()) -> Path:
    """Refuse, before any work, an output file that cannot be written.

    The name must be given (not empty) and fit the file system; ``path`` must not be a folder nor an existing file that
    is not a regular one (a device such as ``/dev/full``, a pipe: the atomic rename would
    replace it); with ``suffixes``, its name must end with one of them; its folder must exist,
    be a folder and take a new file (tried, see :func:`greed_env.files.folder_problem`).

    Raises:
        OutputPathError: naming ``flag`` and the problem.
    """
    given = os.fspath(path)
    if not given.strip():
        raise OutputPathError(f"{flag} {given!r}: an empty name; give a file name")
    why = name_problem(given)
    if why:
        raise OutputPathError(f"{flag} {_short(given)}: {why}")
    p = Path(path)
    if given.endswith(("/", os.sep)) or p.is_dir():
        raise OutputPathError(f"{flag} {given!r} is a folder; give a file name")
    if suffixes and p.suffix.lower() not in suffixes:
        raise OutputPathError(f"{flag} {given!r}: the file name must end with {' or '.join(suffixes)}")
    try:
        check_target(p)
    except OSError as exc:
        raise OutputPathError(f"{flag} {given!r}: {exc.strerror or exc}") from None
    parent = p.absolute().parent
    for part in (parent, *parent.parents):
        if part.exists():
            if not part.is_dir():
                raise OutputPathError(f"{flag} {given!r}: {os.fspath(part)!r} is a file, not a folder")
            break
    if not parent.is_dir():
        raise OutputPathError(f"{flag} {given!r}: the folder {os.fspath(parent)!r} does not exist")
    why = folder_problem(parent)
    if why:
        raise OutputPathError(f"{flag} {given!r}: {why}")
    return p


def check_output_dir(path: str | os.PathLike[str], flag: str) -> Path:
    """Refuse, before any work, an output folder that cannot be made or written: an empty name,
    a name too long, an existing file in its place or on its way, a folder (or the nearest existing parent
    it would be made in) that does not take a new file. A missing folder is fine (it is created
    when written).

    Raises:
        OutputPathError: naming ``flag`` and the problem.
    """
    given = os.fspath(path)
    if not given.strip():
        raise OutputPathError(f"{flag} {given!r}: an empty name; give a folder name")
    why = name_problem(given)
    if why:
        raise OutputPathError(f"{flag} {_short(given)}: {why}")
    p = Path(path)
    for part in (p, *p.parents):
        if part.exists():
            if not part.is_dir():
                raise OutputPathError(f"{flag} {given!r}: {os.fspath(part)!r} is a file, not a folder")
            break
    why = folder_problem(p)
    if why:
        raise OutputPathError(f"{flag} {given!r}: {why}")
    return p


def _short(text: str, keep: int = 60) -> str:
    """``text`` quoted, its middle left out when long (a 300-character name in a one-line error)."""
    return repr(text) if len(text) <= keep else repr(f"{text[: keep // 2]}...{text[-keep // 2 :]}")
