"""The import rules of docs/architecture.md, read from the source (imports inside functions too)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "greed_env"

PAGE = ROOT / "docs" / "architecture.md"


def allowed_from_page() -> dict[str, set[str]]:
    """Part -> the other parts it may import, read from the table of docs/architecture.md: the
    first cell names the part (``envs/``, ``files.py``), the last lists what it may import (the
    backticked part names; ``bots.base`` and the like are notes, not parts)."""
    table: dict[str, set[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`") or not line.startswith("|"):
            continue
        name = cells[0].strip("`").removesuffix("/").removesuffix(".py")
        table[name] = {t for t in re.findall(r"`([a-z_]+)`", cells[2])}
    return table


ALLOWED: dict[str, set[str]] = allowed_from_page()

ENVS_MAY_USE_FROM_BOTS = {"greed_env.bots", "greed_env.bots.base", "greed_env.bots.loader"}
"""The environments take the bot protocol and opponent specs from bots/, nothing else."""


@cache
def modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        name = ".".join(f.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = f
    return out


def _targets(module: str, node: ast.AST) -> list[str]:
    mods = modules()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            if mods[module].name != "__init__.py":
                parts = parts[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, base] if base else parts)
        names = [base] + [f"{base}.{a.name}" for a in node.names]
    elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
        arg = node.args[0] if node.args else None
        names = [arg.value] if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else []
    else:
        return []
    return [n for n in names if n in mods]


@cache
def edges() -> dict[str, frozenset[str]]:
    out = {}
    for m, f in modules().items():
        found = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            found.update(t for t in _targets(m, node) if t != m and not m.startswith(t + "."))
        out[m] = frozenset(found)
    return out


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "greed_env"


def test_every_part_is_in_the_table() -> None:
    parts = {part(m) for m in modules()} - {"greed_env"}
    assert parts <= ALLOWED.keys(), f"parts without import rules: {sorted(parts - ALLOWED.keys())}"
    assert ALLOWED.keys() <= parts, f"rows of docs/architecture.md without a part: {sorted(ALLOWED.keys() - parts)}"
    assert all(b in ALLOWED for a in ALLOWED for b in ALLOWED[a]), "the table names a part it has no row for"


def test_parts_import_only_what_the_architecture_allows() -> None:
    broken = []
    for m, targets in edges().items():
        a = part(m)
        for t in targets:
            b = part(t)
            if a != b and b != "greed_env" and a in ALLOWED and b not in ALLOWED[a]:
                broken.append(f"{m} -> {t}")
            if a == "envs" and b == "bots" and t not in ENVS_MAY_USE_FROM_BOTS:
                broken.append(f"{m} -> {t} (envs take only the bot protocol and the loader)")
    assert not broken, "imports against docs/architecture.md:\n" + "\n".join(sorted(broken))


def part_graph() -> dict[str, set[str]]:
    """Part -> the other parts its modules import (the package face ``greed_env`` aside)."""
    out: dict[str, set[str]] = {}
    for m, targets in edges().items():
        for t in targets:
            a, b = part(m), part(t)
            if a != b and "greed_env" not in (a, b):
                out.setdefault(a, set()).add(b)
    return out


def test_every_listed_permission_is_used() -> None:
    """The table says what each part imports, not what it might: a permission no import uses
    is dropped (a part that comes to need one adds it with the import)."""
    graph = part_graph()
    unused = sorted(f"{a} -> {b}" for a, allowed in ALLOWED.items() for b in allowed - graph.get(a, set()))
    assert unused == [], "permissions in docs/architecture.md that no import uses:\n" + "\n".join(unused)


def _loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The paths that come back to where they started, one per loop found (depth-first)."""
    loops: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(v: str, path: list[str]) -> None:
        state[v] = 1
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                loops.append([*path[path.index(w):], w])
            elif w not in state:
                visit(w, [*path, w])
        state[v] = 2

    for v in sorted(graph):
        if v not in state:
            visit(v, [v])
    return loops


def test_parts_lean_one_way() -> None:
    """No two parts import each other, however indirectly: envs sit above bots (Duel-v0's
    opponent comes from the bot loader), bots read the shared formats of spaces/."""
    assert _loops({a: set(b) for a, b in ALLOWED.items()}) == [], "the table itself has a loop"
    assert _loops(part_graph()) == []


def test_bots_import_nothing_from_envs() -> None:
    bad = sorted(f"{m} -> {t}" for m, ts in edges().items() if part(m) == "bots" for t in ts if part(t) == "envs")
    assert bad == []


WRITERS_OF_THEIR_OWN = {"greed_env.files", "greed_env.rules.record", "greed_env.rules.docs"}
"""Modules that write files without ``files.py``: itself, and the two writers of ``rules/``,
which may import nothing."""
PARTS_WITH_RUN_FOLDERS = {"train"}
"""Parts that write outside ``files.py``: training runs (checkpoints renamed into place, CSV logs
appended to, TensorBoard's own writer)."""
_WRITE_MODES = set("wax+")
_RENAMES = {("os", "replace"), ("os", "rename"), ("tempfile", "mkstemp"), ("tempfile", "NamedTemporaryFile")}


def _is_tmp(node: ast.AST | None) -> bool:
    """A write to the temporary file (or its handle) that ``files.atomic_write_with`` hands a
    writer: it is named ``tmp`` (``fh`` once opened)."""
    return isinstance(node, ast.Name) and node.id in ("tmp", "fh")


def _raw_writes(tree: ast.AST) -> list[int]:
    """Lines that write or rename a file by hand: ``write_text`` / ``write_bytes``, ``open`` in a
    writing mode, a one-argument ``Path.replace`` / ``rename``, ``os.replace``, ``shutil``,
    temporary files, ``np.save*``, ``savefig``, ``tofile``; except on the writer's ``tmp``."""
    return sorted(node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and _writes_by_hand(node))


def _writes_by_hand(node: ast.Call) -> bool:
    func = node.func
    first = node.args[0] if node.args else None
    if isinstance(func, ast.Name):
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        return func.id == "open" and mode is not None and _writing_mode(mode) and not _is_tmp(first)
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value.id if isinstance(func.value, ast.Name) else ""
    name = func.attr
    if name in ("write_text", "write_bytes") or (name == "open" and first is not None and _writing_mode(first)):
        return not _is_tmp(func.value)
    if name in ("replace", "rename"):
        return len(node.args) == 1 and not node.keywords  # Path.replace(target); str.replace takes two
    if (owner, name) in _RENAMES or owner == "shutil":
        return True
    if (owner in ("np", "numpy") and name.startswith("save")) or name in ("savefig", "tofile"):
        return not _is_tmp(first)
    return False


def _writing_mode(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_WRITE_MODES & set(node.value))


def test_every_file_the_package_writes_goes_through_files() -> None:
    """docs/architecture.md: files are written atomically by ``files.py`` (outside training runs
    and the two writers of ``rules/``)."""
    bad = []
    for m, f in sorted(modules().items()):
        if m in WRITERS_OF_THEIR_OWN or part(m) in PARTS_WITH_RUN_FOLDERS:
            continue
        bad += [f"{f.relative_to(ROOT)}:{line}" for line in _raw_writes(ast.parse(f.read_text(encoding="utf-8")))]
    assert bad == [], "files written without greed_env.files:\n" + "\n".join(bad)


def test_the_write_check_sees_a_write_by_hand() -> None:
    code = (
        "def save(path, text, out):\n"
        "    tmp = path.with_suffix('.tmp')\n"
        "    tmp.write_text(text)\n"
        "    tmp.replace(path)\n"
        "    path.write_bytes(b'')\n"
        "    with open(out, 'a') as fh:\n"
        "        fh.write(text)\n"
        "    atomic_write_with(path, lambda tmp: open(tmp, 'wb'))\n"
        "    text.replace('a', 'b')\n"
    )
    assert _raw_writes(ast.parse(code)) == [4, 5, 6]


HEAVY_STACKS = {
    "numba", "torch", "onnxruntime", "onnx", "onnxscript", "ray", "stable_baselines3", "sb3_contrib",
    "matplotlib", "tensorboard", "PIL", "pygame",
}
"""The heavy optional stacks docs/architecture.md names: imported inside functions only."""
BUILT_ON_ACCESS = {"greed_env.rllib.module"}
"""Modules whose names are built from a heavy stack when first imported (RLlib's module class)."""


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported: outside functions and ``TYPE_CHECKING``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse)
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(node, name, None)
                if isinstance(inner, list):
                    walk(inner)
            for handler in getattr(node, "handlers", []):
                walk(handler.body)

    walk(tree.body)
    return found


@cache
def heavy_modules() -> frozenset[str]:
    """The modules of the package that import a heavy stack when imported, themselves or
    through the modules (and parent packages) they import at the top."""
    heavy, loads = set(BUILT_ON_ACCESS), {}
    for m, f in modules().items():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        deps = set()
        for node in _top_level_imports(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if not getattr(node, "level", 0) and any(n.split(".")[0] in HEAVY_STACKS for n in names):
                heavy.add(m)
            deps.update(t for t in _targets(m, node) if t != m)
        pieces = m.split(".")
        deps.update(".".join(pieces[:i]) for i in range(2, len(pieces)))
        loads[m] = deps
    while True:
        more = {m for m, deps in loads.items() if m not in heavy and deps & heavy}
        if not more:
            return frozenset(heavy)
        heavy |= more


def light_lazy_imports() -> list[str]:
    """In-function imports of the package's own modules that load no heavy stack."""
    bad = []
    for m, f in sorted(modules().items()):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in fn.body:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        bad += [
                            f"{f.relative_to(ROOT)}:{sub.lineno} ({fn.name}) -> {t}"
                            for t in _targets(m, sub)
                            if t not in heavy_modules() and t != m and not m.startswith(t + ".")
                        ]
    return sorted(set(bad))


def test_lazy_imports_are_for_heavy_stacks_only() -> None:
    """docs/architecture.md: a module that always ships is imported at the top of the file (a
    typo fails at once); only the heavy stacks, and the modules that load them, wait for a
    function to need them."""
    assert light_lazy_imports() == []


def test_the_heavy_modules_are_those_of_the_numba_and_torch_stacks() -> None:
    heavy = heavy_modules()
    assert {"greed_env.solver", "greed_env.solver.optimal_bot", "greed_env.vector.engine", "greed_env.train.network"} <= heavy
    assert not heavy & {"greed_env.rules", "greed_env.spaces.catalog", "greed_env.bots.loader", "greed_env.evaluation.runner",
                        "greed_env.envs.duel", "greed_env.bots.onnx_backend", "greed_env.bots.sb3_backend"}


def test_no_import_cycle_between_modules() -> None:
    faces = {m for m, f in modules().items() if f.name == "__init__.py"}
    graph = {m: set(ts) - faces for m, ts in edges().items() if m not in faces}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_check_sees_imports_inside_functions() -> None:
    assert "greed_env.solver" in edges()["greed_env.bots.solver_backend"]  # imported inside functions only


def test_rules_import_no_other_part() -> None:
    outside = sorted(t for m, ts in edges().items() if part(m) == "rules" for t in ts if part(t) not in ("rules",))
    assert outside == []


@pytest.mark.parametrize("name", ["bots", "evaluation"])
def test_bots_and_evaluation_never_import_training(name: str) -> None:
    bad = sorted(f"{m} -> {t}" for m, ts in edges().items() if part(m) == name for t in ts if part(t) == "train")
    assert bad == []


def test_playing_an_exported_bot_and_evaluating_loads_no_training_code() -> None:
    code = (
        "import sys, numpy as np\n"
        "from greed_env.bots import load\n"
        "from greed_env.bots.play import play_game\n"
        "from greed_env.evaluation import evaluate\n"
        "from greed_env.rules import preset\n"
        "r = preset('ten_thousand')\n"
        "bot = load('ten_thousand/ppo-turn', r)\n"
        "play_game(r, [bot, load('threshold-300', r)], np.random.default_rng(0), "
        "[np.random.default_rng(1), np.random.default_rng(2)])\n"
        "evaluate('ten_thousand/ppo-turn', r, 'turn', episodes=20, regret_episodes=0)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('greed_env.train', 'torch'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_one_list_of_objectives() -> None:
    from greed_env.envs.solitaire import OBJECTIVES as SOLITAIRE
    from greed_env.evaluation import OBJECTIVES as EVALUATED
    from greed_env.solver import OBJECTIVES

    assert set(SOLITAIRE) < set(EVALUATED) <= set(OBJECTIVES)
    tuples = [
        f"{m}" for m, f in modules().items()
        if re.search(r'(?m)^OBJECTIVES = \("', f.read_text(encoding="utf-8"))
    ]
    assert sorted(tuples) == ["greed_env.envs.solitaire", "greed_env.solver.table"], tuples


def test_every_command_module_is_registered() -> None:
    """docs/architecture.md: a command is a module ``commands/<name>_cmd.py`` in ``COMMAND_MODULES``."""
    from greed_env.cli import COMMAND_MODULES

    registered = {m.__name__ for m in COMMAND_MODULES}
    found = {m for m in modules() if part(m) == "commands" and m.endswith("_cmd")}
    assert registered == found


def test_test_file_names_are_unique_across_folders() -> None:
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_every_rules_field_is_mirrored_or_refused_by_the_vector_engine() -> None:
    """docs/architecture.md: the vector engine's turn flow mirrors every rules field or its
    ``check_vector_supported`` refuses it (either way the field is named in ``vector/``); a field
    of the scoring reaches the vector tables through ``rules/scoring.py`` (and ``Rules.set_value``),
    from which they are derived."""
    import inspect
    from dataclasses import fields

    from greed_env.rules import Rules

    vector = "\n".join(f.read_text(encoding="utf-8") for m, f in modules().items() if part(m) == "vector")
    scoring = (PACKAGE / "rules" / "scoring.py").read_text(encoding="utf-8") + inspect.getsource(Rules.set_value)
    unseen = [f.name for f in fields(Rules) if not re.search(rf"\b{f.name}\b", vector) and not re.search(rf"\b{f.name}\b", scoring)]
    assert unseen == []


BOT_ABILITY_NAMES = {
    "act_ids", "act_batch", "act_obs", "temperature", "check_rules", "catalog", "max_players",
    "min_players", "duel_bot", "inner", "abilities", "card", "training_card", "policy", "objective",
    "table", "move_values", "description",
}
"""Attributes a consumer might probe a bot for instead of asking its declared abilities."""
PARTS_THAT_PLAY_BOTS = ("bots", "evaluation", "benchmark", "vector", "envs")


def _probes(tree: ast.AST) -> list[int]:
    """Lines that guess a bot's abilities: ``getattr``/``hasattr`` of an ability name, an exact
    type test against a bot class, an ``isinstance`` test against a concrete bot class."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2:
            name, arg = node.func.id, node.args[1]
            if name in ("getattr", "hasattr") and isinstance(arg, ast.Constant) and arg.value in BOT_ABILITY_NAMES:
                found.append(node.lineno)
            if name == "isinstance":
                classes = arg.elts if isinstance(arg, ast.Tuple) else [arg]
                if any(isinstance(c, ast.Name) and c.id.endswith("Bot") and c.id != "Bot" for c in classes):
                    found.append(node.lineno)
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            callee = node.left.func
            if isinstance(callee, ast.Name) and callee.id == "type" and any(
                isinstance(c, ast.Name) and c.id.endswith("Bot") for c in node.comparators
            ):
                found.append(node.lineno)
    return sorted(found)


def test_no_consumer_guesses_a_bots_abilities() -> None:
    """docs/architecture.md: a bot declares what it can do (``greed_env.abilities``); play,
    evaluation, the benchmark, the vector engine and the environments ask the declaration."""
    bad = []
    for m, f in sorted(modules().items()):
        if part(m) in PARTS_THAT_PLAY_BOTS:
            bad += [f"{f.relative_to(ROOT)}:{line}" for line in _probes(ast.parse(f.read_text(encoding="utf-8")))]
    assert bad == []


def test_the_probe_check_sees_a_probe() -> None:
    code = (
        "ids = getattr(bot, 'act_ids', None)\n"
        "if hasattr(bot, 'act_obs') and type(bot) is ThresholdBot:\n"
        "    pass\n"
        "if isinstance(bot, (SolverBot, int)) or isinstance(bot, Bot):\n"
        "    pass\n"
        "getattr(state, 'scores')\n"
    )
    assert _probes(ast.parse(code)) == [1, 2, 2, 4]



def test_folder_conftests_sort_after_the_shared_one() -> None:
    """--doctest-modules imports tests/conftest.py as a module named conftest; a folder's own
    conftest.py loaded before it (a folder sorting before 'conftest.py') takes that name first."""
    early = [p.parent.name for p in (ROOT / "tests").glob("*/conftest.py") if p.parent.name < "conftest.py"]
    assert not early, f"rename these test folders to sort after conftest.py: {early}"
