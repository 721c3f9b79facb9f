"""Finding and running the training scripts (``training/*.py``) that ``greed train NAME`` runs.

A training script is a file ``training/NAME.py`` with a dataclass ``Args`` (its options, the
documented recipe as defaults), ``main(args) -> Path`` (train, return the run folder) and the
lines that run it as a program (``if __name__ == "__main__": main(parse_args(Args))``);
nothing registers it: :func:`script_names` lists every such file, read with :mod:`ast` (no
import, so ``greed --help`` stays fast), and :func:`run_script` runs one as Python runs
``python training/NAME.py ARGS``: the file is the ``__main__`` program, its own command line
parses ``ARGS``. No part of the package imports a script for what it defines: a chain of stages
and the demo train another recipe with :func:`run_recipe`, in a process of its own, as the
command ``greed train NAME ...`` would.

Where the scripts are:

* in a source checkout, ``training/`` beside the ``greed_env/`` folder this package was
  imported from (``PYTHONPATH`` or an editable install);
* in an installed wheel, the package ``greed_env.training``: the build maps it to
  ``training/`` (``setup.py``), so the same files ship inside ``greed_env``.

A script defines no function or class that a worker process must import by name (environment
factories come from :mod:`greed_env.train.backends`): run as ``__main__``, its own names are
not importable from another process.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "PACKAGE",
    "ScriptError",
    "run_recipe",
    "run_script",
    "script_docstring",
    "script_names",
    "script_path",
    "scripts_dir",
    "to_flags",
]

PACKAGE = "greed_env.training"
"""The import name of the installed training scripts' folder."""


class ScriptError(LookupError):
    """No training script of that name, or no folder of training scripts."""


def _checkout_dir() -> Path | None:
    folder = Path(__file__).resolve().parents[2] / "training"
    return folder if (folder / "__init__.py").is_file() else None


def scripts_dir() -> Path:
    """The folder of the training scripts (the checkout's ``training/``, else the installed one).

    Raises:
        ScriptError: neither exists (an install built without them).
    """
    checkout = _checkout_dir()
    if checkout is not None:
        return checkout
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ScriptError("no training scripts: this greed_env has no training/ folder (use a source checkout)")
    return Path(next(iter(spec.submodule_search_locations)))


def _is_script(path: Path) -> bool:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    names = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    runs = any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)
    return {"Args", "main"} <= names and runs


def script_names() -> list[str]:
    """Names of the training scripts, sorted: every ``training/NAME.py`` defining ``Args`` and
    ``main`` that runs as a program (``if __name__ == "__main__": main(parse_args(Args))``)."""
    folder = scripts_dir()
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_") and _is_script(p))


def script_path(name: str) -> Path:
    """The file of the training script ``name``.

    Raises:
        ScriptError: no script of that name.
    """
    if name not in script_names():
        raise ScriptError(f"unknown training script {name!r}; available: {', '.join(script_names())}")
    return scripts_dir() / f"{name}.py"


def script_docstring(name: str) -> str:
    """The module docstring of the script ``name``, read without running it ('' if none)."""
    path = scripts_dir() / f"{name}.py"
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def run_script(name: str, argv: Sequence[str]) -> None:
    """Run ``training/NAME.py`` as ``python training/NAME.py ARGV`` runs it, its program name
    ``greed train NAME`` (in its usage and help).

    Raises:
        ScriptError: no script of that name.
        SystemExit: from the script's command line (``--help``, a refused flag).
        ImportError: the script needs a package that is not installed (e.g. the ``train`` extra).
    """
    path = script_path(name)
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    main = types.ModuleType("__main__")
    main.__file__ = str(path)
    saved_argv, saved_main = sys.argv, sys.modules["__main__"]
    sys.argv, sys.modules["__main__"] = [f"greed train {name}", *argv], main  # runpy would name the file
    try:
        exec(code, main.__dict__)
    finally:
        sys.argv, sys.modules["__main__"] = saved_argv, saved_main


def to_flags(settings: Mapping[str, Any]) -> list[str]:
    """The command line a script reads back as ``settings`` (field name to value; its parser is
    :func:`greed_env.train.settings.parse_args`):
    ``--flag VALUE``, ``--flag`` / ``--no-flag`` for a bool, ``none`` for None, ``--set`` once
    per rules override.

    >>> to_flags({"total_timesteps": 2000, "lean_masking": True, "eval_exact": False,
    ...           "run_name": None, "rules_set": ["target=3000", "entry_threshold=500"]})
    ['--total-timesteps', '2000', '--lean-masking', '--no-eval-exact', '--run-name', 'none', '--set', 'target=3000', '--set', 'entry_threshold=500']
    """
    argv: list[str] = []
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if name == "rules_set":
            argv += [item for override in value for item in ("--set", str(override))]
        elif isinstance(value, bool):
            argv.append(flag if value else "--no-" + flag[2:])
        else:
            argv += [flag, "none" if value is None else str(value)]
    return argv


def run_recipe(name: str, settings: Mapping[str, Any]) -> None:
    """Train the recipe ``name`` with ``settings`` (its ``Args`` fields that differ from the
    defaults) in a child process: ``greed train NAME --flag VALUE ...``, its output on this one's.

    Raises:
        ScriptError: no script of that name.
        RuntimeError: the run failed (its message is on stderr above).
    """
    script_path(name)
    argv = to_flags(settings)
    package_root = str(Path(__file__).resolve().parents[2])  # this greed_env, also from a bare checkout
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-m", "greed_env.cli", "train", name, *argv], env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"greed train {name} {' '.join(argv)} failed (exit status {done.returncode})")
