"""Finding and loading the training scripts (``training/*.py``) that ``greed train NAME`` runs.

A training script is a file ``training/NAME.py`` with a dataclass ``Args`` (its options, the
documented recipe as defaults) and ``main(args) -> Path`` (train, return the run folder);
nothing registers it: :func:`script_names` lists every such file, read with :mod:`ast` (no
import, so ``greed --help`` stays fast), and :func:`load_script` imports one as
``greed_env.training.NAME``.

Where the scripts are:

* in a source checkout, ``training/`` beside the ``greed_env/`` folder this package was
  imported from (``PYTHONPATH`` or an editable install): that folder is made the package
  ``greed_env.training`` in this process, so the checkout's scripts are the ones run;
* in an installed wheel, the package ``greed_env.training``: the build maps it to
  ``training/`` (``setup.py``), so the same files ship inside ``greed_env``.

A script defines no function or class that a worker process must import by name (environment
factories come from :mod:`greed_env.train.backends`), because in a checkout that is not
installed, a worker process cannot import ``greed_env.training``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["PACKAGE", "ScriptError", "load_script", "script_docstring", "script_names", "scripts_dir"]

PACKAGE = "greed_env.training"
"""The import name of the training scripts' folder."""


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
    return {"Args", "main"} <= names


def script_names() -> list[str]:
    """Names of the training scripts, sorted: every ``training/NAME.py`` defining ``Args`` and ``main``."""
    folder = scripts_dir()
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_") and _is_script(p))


def script_docstring(name: str) -> str:
    """The module docstring of the script ``name``, read without importing it ('' if none)."""
    path = scripts_dir() / f"{name}.py"
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _package() -> ModuleType:
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    checkout = _checkout_dir()
    if checkout is None:
        return importlib.import_module(PACKAGE)
    spec = importlib.util.spec_from_file_location(
        PACKAGE, checkout / "__init__.py", submodule_search_locations=[str(checkout)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[PACKAGE]
        raise
    return module


def load_script(name: str) -> ModuleType:
    """Import the training script ``name`` (``training/NAME.py``) as ``greed_env.training.NAME``.

    Raises:
        ScriptError: no script of that name.
        ImportError: the script needs a package that is not installed (e.g. the ``train`` extra).
    """
    if name not in script_names():
        raise ScriptError(f"unknown training script {name!r}; available: {', '.join(script_names())}")
    _package()
    return importlib.import_module(f"{PACKAGE}.{name}")
