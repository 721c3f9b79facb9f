"""Solved tables: the values at the start of a turn, with their metadata, on disk.

A table file is a zip archive with the ``.npz`` layout: one ``NAME.npy`` member per array
(readable with ``numpy.load``) and a ``meta.json`` member (``unzip -p FILE meta.json``) holding
the format version, the objective, the full rules dict and fingerprint, the solver version, the
options (cap, tolerance), the headline value and the sha256 of the arrays. Loading checks all
of it and refuses a corrupt, truncated or mismatched file with :class:`TableError`; saving
writes a temporary file beside the target and renames it, so an interrupted write never
leaves a half-written table.

>>> import numpy as np
>>> from greed_env.rules import preset
>>> t = SolverTable(preset("farkle"), "entry", {"turn_value": np.array([0.5])}, {"headline": 0.5})
>>> t.headline, t.filename()
(0.5, 'farkle-...-entry.npz')
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.files import atomic_write_with
from greed_env.rules.config import Rules, RulesError

__all__ = [
    "FORMAT_VERSION",
    "OBJECTIVES",
    "SOLVER_VERSION",
    "SolverTable",
    "TableError",
    "arrays_checksum",
    "cache_dir",
    "package_table_dir",
]

FORMAT_VERSION = 1
SOLVER_VERSION = "1.0"
OBJECTIVES = ("turn", "entry", "race", "duel", "3p")
_META = "meta.json"


class TableError(ValueError):
    """A table file that cannot be used: unreadable, corrupt, or for other rules/objective."""


def arrays_checksum(arrays: dict[str, np.ndarray]) -> str:
    """sha256 over the arrays' names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """Where ``greed solve`` writes tables: ``$GREED_ENV_CACHE`` or ``~/.cache/greed_env``."""
    env = os.environ.get("GREED_ENV_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "greed_env"


def package_table_dir() -> Path:
    """The tables shipped inside the package (``greed_env/data/tables``)."""
    return Path(__file__).resolve().parent.parent / "data" / "tables"


@dataclass
class SolverTable:
    """Turn-start values of one objective under one rule set.

    Attributes:
        rules: the rule set solved.
        objective: ``turn``, ``entry``, ``race``, ``duel`` or ``3p`` (three players).
        arrays: named numpy arrays (see ``docs/solver.md`` for each objective's layout).
        meta: JSON-able metadata; ``meta["headline"]`` is the objective's headline number.
    """

    rules: Rules
    objective: str
    arrays: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def headline(self) -> float:
        """Expected turn score, probability of coming in, expected turns from 0, or the first
        player's win probability at the start, by objective."""
        return float(self.meta["headline"])

    def filename(self) -> str:
        """``<rules name>-<fingerprint>-<objective>.npz``, then ``-<option><value>`` for each
        solver option that changes values (``meta["solve_options"]``: cap, floor, tol)."""
        extra = "".join(f"-{k}{v}" for k, v in sorted((self.meta.get("solve_options") or {}).items()))
        return f"{self.rules.name}-{self.rules.fingerprint}-{self.objective}{extra}.npz"

    def full_meta(self) -> dict[str, Any]:
        """The metadata written to disk (with versions, rules and checksum filled in)."""
        meta = dict(self.meta)
        meta.update(
            format_version=FORMAT_VERSION,
            solver_version=SOLVER_VERSION,
            objective=self.objective,
            rules_name=self.rules.name,
            rules_fingerprint=self.rules.fingerprint,
            rules=self.rules.to_dict(),
            arrays={k: [str(v.dtype), list(v.shape)] for k, v in sorted(self.arrays.items())},
            sha256=arrays_checksum(self.arrays),
        )
        return meta

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the table atomically; ``path`` may be a file or a directory (default: cache).

        Returns the file written.

        Raises:
            TableError: ``path`` names a file that is not ``.npz``, or a new folder whose name
                has a suffix (``x.txt``: a file was meant).
        """
        target = Path(path) if path is not None else cache_dir()
        if target.suffix.lower() != ".npz" or target.is_dir():
            if target.exists() and not target.is_dir():
                raise TableError(f"{target} is a file: give a folder or a file name ending in .npz")
            if target.suffix and not target.is_dir():
                raise TableError(f"{target}: give a folder or a file name ending in .npz")
            target = target / self.filename()

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
                for name, arr in sorted(self.arrays.items()):
                    buf = io.BytesIO()
                    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
                    zf.writestr(f"{name}.npy", buf.getvalue())
                zf.writestr(_META, json.dumps(self.full_meta(), indent=1, sort_keys=True))

        atomic_write_with(target, write)
        return target

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        rules: Rules | None = None,
        objective: str | None = None,
    ) -> SolverTable:
        """Read and verify a table file.

        Raises:
            TableError: unreadable or truncated file, unknown format version, checksum
                mismatch, or (when given) other rules fingerprint or objective.
        """
        path = Path(path)
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
                if _META not in names:
                    raise TableError(f"{path}: not a solver table (no {_META})")
                meta = json.loads(zf.read(_META))
                arrays: dict[str, np.ndarray] = {}
                for name in names:
                    if name.endswith(".npy"):
                        with zf.open(name) as fh:
                            arrays[name[:-4]] = np.lib.format.read_array(
                                io.BytesIO(fh.read()), allow_pickle=False
                            )
        except TableError:
            raise
        except (OSError, zipfile.BadZipFile, ValueError, KeyError, EOFError) as exc:
            raise TableError(f"{path}: unreadable or truncated table ({exc})") from None
        if meta.get("format_version") != FORMAT_VERSION:
            raise TableError(
                f"{path}: table format {meta.get('format_version')!r}, this solver reads "
                f"{FORMAT_VERSION}: solve again"
            )
        if arrays_checksum(arrays) != meta.get("sha256"):
            raise TableError(f"{path}: checksum mismatch, the file is corrupt")
        try:
            stored = Rules.from_dict(meta["rules"])
        except (RulesError, KeyError, TypeError) as exc:
            raise TableError(f"{path}: bad rules in metadata ({exc})") from None
        if stored.fingerprint != meta.get("rules_fingerprint"):
            raise TableError(f"{path}: rules do not match their fingerprint")
        if rules is not None and rules.fingerprint != stored.fingerprint:
            raise TableError(
                f"{path}: table is for rules {meta.get('rules_name')!r} "
                f"(fingerprint {stored.fingerprint}), not {rules.name!r} ({rules.fingerprint})"
            )
        if objective is not None and meta.get("objective") != objective:
            raise TableError(
                f"{path}: table is for objective {meta.get('objective')!r}, not {objective!r}"
            )
        found = str(meta.get("objective"))
        if found not in OBJECTIVES:
            raise TableError(f"{path}: unknown objective {found!r}")
        for key in ("format_version", "solver_version", "objective", "rules_name",
                    "rules_fingerprint", "rules", "arrays", "sha256"):
            meta.pop(key, None)
        return cls(rules if rules is not None else stored, found, arrays, meta)
