"""Run folders and checkpoints of the training scripts.

Run directory layout::

    runs/<rules>__<objective>__<exp>__<seed>__<time>/
        args.json            arguments of the first session
        tb/                  TensorBoard event files (:mod:`greed_env.train.tensorboard`)
        eval.csv             one row per evaluation (:data:`EVAL_FIELDS`)
        checkpoints/         step_N.zip (the last two) and latest.json
        model.zip            final model (stable-baselines3 / sb3-contrib)
        model.json           its card

:func:`prepare_run` picks or creates the run directory and reads the last checkpoint for
``--resume`` (:mod:`greed_env.train.session` builds a script's run on it); :class:`Checkpointer` writes ``checkpoints/step_N.zip`` then
``checkpoints/latest.json``, each through :mod:`greed_env.files` (a temporary file, then
``os.replace``), so a run killed at any moment resumes from a complete checkpoint.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from sb3_contrib import MaskablePPO

from greed_env.evaluation import EvalResult
from greed_env.files import atomic_write_text, atomic_write_with
from greed_env.train.args import run_name

__all__ = [
    "EVAL_FIELDS",
    "CheckpointError",
    "Checkpointer",
    "RunState",
    "eval_row",
    "prepare_run",
    "save_model_atomic",
    "truncate_eval_csv",
]


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


def prepare_run(args: Any, objective: str) -> tuple[Path, RunState | None]:
    """The run directory and, with ``--resume``, its last checkpoint.

    ``args`` is a training script's ``Args`` (``runs_dir``, ``run_name``, ``resume``, ``rules``,
    ``exp_name``, ``seed``).

    A fresh run gets ``runs_dir/<run name>``. ``--resume`` takes ``--run-name`` if given, else
    the newest directory named ``<rules>__<objective>__<exp>__<seed>__*``.

    Raises:
        FileNotFoundError: ``--resume`` and no such run, or a run without a checkpoint.
        FileExistsError: a fresh run whose directory already exists.
    """
    runs = Path(args.runs_dir)
    if args.resume:
        if args.run_name:
            run_dir = runs / args.run_name
        else:
            prefix = f"{args.rules}__{objective}__{args.exp_name}__{args.seed}__"
            found = sorted(
                (p for p in runs.glob(prefix + "*") if p.is_dir()), key=lambda p: p.stat().st_mtime
            )
            if not found:
                raise FileNotFoundError(f"--resume: no run named {prefix}* in {runs}")
            # the newest run with a checkpoint (one that failed at its start has none)
            with_ckpt = [p for p in found if (p / "checkpoints" / "latest.json").is_file()]
            run_dir = with_ckpt[-1] if with_ckpt else found[-1]
        if not run_dir.is_dir():
            raise FileNotFoundError(f"--resume: run directory {run_dir} does not exist")
        ckpt = Checkpointer(run_dir)
        state = ckpt.latest()
        if state is None:
            raise FileNotFoundError(
                f"--resume: {run_dir} has no checkpoint yet (it stopped before its first one, so "
                f"nothing was saved): delete it (rm -r {run_dir}) and run the same command without --resume"
            )
        return run_dir, ckpt.usable(state)
    name = args.run_name or run_name(args.rules, objective, args.exp_name, args.seed)
    run_dir = runs / name
    if run_dir.exists():
        raise FileExistsError(f"run directory {run_dir} exists: pass --resume to continue it, or another --run-name")
    run_dir.mkdir(parents=True)
    atomic_write_text(run_dir / "args.json", json.dumps(dataclasses.asdict(args), indent=1))
    return run_dir, None


EVAL_FIELDS = (
    "step",
    "wall_s",
    "cpu_s",
    "value",
    "ci95",
    "optimal",
    "ratio",
    "regret_estimate",
    "regret_estimate_ci95",
    "mean_regret",
    "worst_regret",
    "optimal_share",
    "exact",
    "exact_ratio",
)


def eval_row(step: int, wall_s: float, cpu_s: float, res: EvalResult) -> dict[str, float]:
    row = {
        "step": float(step),
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),
        "value": res.score.mean,
        "ci95": res.score.half_width,
        "optimal": res.optimal,
        "ratio": res.ratio,
        "mean_regret": res.mean_regret,
        "worst_regret": res.worst_regret,
        "optimal_share": res.optimal_share,
    }
    if res.regret_estimate is not None:
        row["regret_estimate"] = res.regret_estimate.mean
        row["regret_estimate_ci95"] = res.regret_estimate.half_width
    if res.exact is not None:
        row["exact"] = res.exact
        row["exact_ratio"] = float(res.exact_ratio or 0.0)
    return row


def truncate_eval_csv(path: Path, step: int) -> None:
    """Drop evaluation rows logged after ``step`` (a session killed after its checkpoint)."""
    if not path.is_file():
        return
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if float(r["step"]) <= step]
    text = ",".join(EVAL_FIELDS) + "\n" + "".join(
        ",".join(r.get(k, "") or "" for k in EVAL_FIELDS) + "\n" for r in rows
    )
    atomic_write_text(path, text)
