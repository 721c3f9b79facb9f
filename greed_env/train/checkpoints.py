"""Atomic checkpoints of a training run, and where the run stands at each.

:class:`Checkpointer` writes ``RUN/checkpoints/step_N.zip`` with its :class:`RunState` beside
it, then ``checkpoints/latest.json``, each through :mod:`greed_env.files` (a temporary file,
then ``os.replace``), so a run killed at any moment resumes from a complete checkpoint; on
``--resume`` it falls back from a corrupt newest zip to the one kept before it. The run folder
around the checkpoints is :mod:`greed_env.train.run`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from sb3_contrib import MaskablePPO

from greed_env.files import atomic_write_text, atomic_write_with

__all__ = ["CheckpointError", "Checkpointer", "RunState", "save_model_atomic"]


def save_model_atomic(model: MaskablePPO, path: Path) -> None:
    """``model.save(path)`` through a temporary file, so ``path`` is always complete (written
    with the permissions of :func:`greed_env.files.atomic_write_bytes`)."""
    atomic_write_with(path, model.save)


@dataclasses.dataclass
class RunState:
    """Where a run stands: restored from ``latest.json`` on resume.

    Attributes:
        step: environment steps done at the checkpoint.
        model_file: the checkpoint's model zip (relative to the checkpoint directory).
        wall_s: training seconds summed over every session up to the checkpoint.
        cpu_s: CPU seconds (this process and its finished children, periodic evaluations
            included) summed over every session up to the checkpoint.
        sessions: sessions so far (1 for a fresh run).
        extra: script-specific state (the self-play pool, for instance).
    """

    step: int = 0
    model_file: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    sessions: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


class CheckpointError(ValueError):
    """A checkpoint index (``latest.json``) or model zip that cannot be read."""


class Checkpointer:
    """Atomic checkpoints in ``run_dir/checkpoints`` (the last ``keep`` model zips).

    Each ``step_N.zip`` has its run state beside it (``step_N.json``) and ``latest.json``
    names the newest, so a resumed run whose newest zip turns out corrupt falls back to the
    one kept before it, with the state that goes with it.
    """

    def __init__(self, run_dir: Path, keep: int = 2) -> None:
        self.dir = run_dir / "checkpoints"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keep = keep

    def _read_state(self, path: Path) -> RunState:
        try:
            state = RunState(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise CheckpointError(f"checkpoint index {path} is corrupt ({' '.join(str(exc).split())})") from None
        if not isinstance(state.model_file, str) or not isinstance(state.step, int):
            raise CheckpointError(f"checkpoint index {path} is corrupt (bad model_file or step)")
        return state

    def latest(self) -> RunState | None:
        """The last complete checkpoint, or None.

        Raises:
            CheckpointError: ``latest.json`` is not a checkpoint index (the message names it).
            FileNotFoundError: the model zip it names is missing.
        """
        path = self.dir / "latest.json"
        if not path.is_file():
            return None
        state = self._read_state(path)
        if not (self.dir / state.model_file).is_file():
            raise FileNotFoundError(f"checkpoint {self.dir / state.model_file} named by {path} is missing")
        return state

    def usable(self, state: RunState) -> RunState:
        """``state`` when its model zip is intact, else the newest intact one kept before it
        (each skipped file named on stderr).

        Raises:
            CheckpointError: no kept checkpoint is intact.
        """
        candidates = [state]
        for side in sorted(self.dir.glob("step_*.json"), reverse=True):
            try:
                older = self._read_state(side)
            except CheckpointError:
                continue
            if older.step < state.step:
                candidates.append(older)
        problems = []
        for cand in candidates:
            path = self.dir / cand.model_file
            why = _zip_problem(path)
            if not why:
                return cand
            problems.append(f"{path} ({why})")
            print(f"checkpoint {path} is unusable ({why}); trying the one kept before it", file=sys.stderr)
        raise CheckpointError("--resume: no intact checkpoint: " + "; ".join(problems))

    def save(self, model: MaskablePPO, state: RunState) -> Path:
        """Write the model zip and its state, then point ``latest.json`` at it; prune older zips."""
        name = f"step_{state.step:012d}.zip"
        save_model_atomic(model, self.dir / name)
        state = dataclasses.replace(state, model_file=name)
        text = json.dumps(dataclasses.asdict(state), indent=1)
        atomic_write_text(self.dir / name.replace(".zip", ".json"), text)
        atomic_write_text(self.dir / "latest.json", text)
        zips = sorted(self.dir.glob("step_*.zip"))
        for old in zips[: -self.keep]:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)
        return self.dir / name


def _zip_problem(path: Path) -> str:
    """Why ``path`` is not an intact stable-baselines3 zip ('' when it is)."""

    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    if bad is not None:
        return f"member {bad} fails its CRC check"
    if "data" not in names or "policy.pth" not in names:
        return "not a stable-baselines3 model"
    return ""
