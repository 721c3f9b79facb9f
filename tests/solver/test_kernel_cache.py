"""numba's disk cache of the solver's kernels: one stamp over every kernel module, so a kernel
never runs a stale copy of what it inlines from another module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from numba.core.registry import CPUDispatcher

import greed_env.solver as solver_package
from greed_env import jit_cache
from greed_env.solver import kernel_cache

SOLVER = Path(solver_package.__file__).resolve().parent


def test_every_module_that_compiles_kernels_is_in_the_group() -> None:
    import importlib

    compiling = set()
    for path in SOLVER.glob("*.py"):
        module = importlib.import_module(f"greed_env.solver.{path.stem}") if path.stem != "__init__" else solver_package
        if any(isinstance(v, CPUDispatcher) and v.__module__ == module.__name__ for v in vars(module).values()):
            compiling.add(path.stem)
    assert compiling <= set(kernel_cache.KERNEL_MODULES), compiling - set(kernel_cache.KERNEL_MODULES)
    assert {"kernels", "carry_kernels", "penalty_passes"} <= compiling


def test_every_cached_kernel_carries_the_group_stamp() -> None:
    import importlib

    seen = 0
    for name in kernel_cache.KERNEL_MODULES:
        module = importlib.import_module(f"greed_env.solver.{name}")
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value._cache is not None and value.__module__ == module.__name__:
                locator = value._cache._impl._locator
                if not hasattr(locator, "_group_stamp"):
                    continue  # not cached on disk (numba's no-op cache)
                assert locator.get_source_stamp() == kernel_cache.group_stamp(), value
                seen += 1
    assert seen > 20


CALLEE = "def shift(x):\n    return x + {n}\n"
CALLER = textwrap.dedent(
    """
    from pathlib import Path
    from greed_env import jit_cache
    HERE = Path(__file__).resolve().parent
    jit_cache.stamp_group([HERE / "caller.py", HERE / "callee.py"], lambda: jit_cache.file_digest([HERE / "caller.py", HERE / "callee.py"]))
    from numba import njit
    import callee
    shift = njit(callee.shift)

    @njit(cache=True)
    def twice(x):
        return 2 * shift(x)
    """
)


def test_a_changed_callee_recompiles_its_caller(tmp_path: Path) -> None:
    """The stale copy numba's per-file stamp would run: a cached caller, then its callee
    changed in another file; the next process must see the new callee."""
    (tmp_path / "caller.py").write_text(CALLER)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    run = [sys.executable, "-c", "import caller; print(caller.twice(1))"]
    results = []
    for n in (10, 20):
        (tmp_path / "callee.py").write_text(CALLEE.format(n=n))
        out = subprocess.run(run, env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
        results.append(int(out.stdout.strip()))
    assert results == [22, 42]
    assert any((tmp_path / "cache").rglob("*.nbi")), "the caller was not cached on disk"


def test_file_digest_follows_every_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    before = jit_cache.file_digest([a, b])
    assert jit_cache.file_digest([b, a]) == before
    b.write_text("y = 3\n")
    assert jit_cache.file_digest([a, b]) != before
    assert jit_cache.file_digest([a, b], b"extra") != jit_cache.file_digest([a, b])
