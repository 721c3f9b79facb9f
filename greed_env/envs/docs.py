"""Documentation tables generated from the code, for docstrings and ``docs/envs.md``.

:data:`OBS_TABLE_DOC` and :func:`observation_table` come straight from the observation spec.
:data:`CATALOG_SIZES_DOC` is the per-preset catalog size table written into the environment
docstrings; building every catalog at import would cost time, so it is a literal checked
against :func:`catalog_sizes_table` by the tests. ``docs/envs.md`` holds
:func:`generated_block` between ``<!-- BEGIN GENERATED -->`` and ``<!-- END GENERATED -->``;
``python scripts/gen_env_docs.py`` rewrites it and a test checks the file is current.

>>> catalog_sizes_table() == CATALOG_SIZES_DOC
True
"""

from __future__ import annotations

from greed_env.rules import preset, preset_names
from greed_env.spaces.catalog import ACTION_CATALOG_VERSION, ActionCatalog
from greed_env.spaces.observation import OBS_DIM, OBS_SPEC_VERSION, observation_table

__all__ = [
    "BEGIN",
    "CATALOG_SIZES_DOC",
    "END",
    "OBS_TABLE_DOC",
    "catalog_sizes_table",
    "generated_block",
    "render",
]

BEGIN = "<!-- BEGIN GENERATED -->"
END = "<!-- END GENERATED -->"

OBS_TABLE_DOC = observation_table()

CATALOG_SIZES_DOC = """\
| preset | n | non-keep moves | keeps | of which read large straight / small straight first / three pairs first | alternate (fill) keeps | catalog version |
|---|---|---|---|---|---|---|
| farkle | 76 | 2 | 74 | 0 / 0 / 0 | 0 | 1 |
| farkle5 | 47 | 2 | 45 | 0 / 0 / 0 | 0 | 1 |
| greed | 137 | 3 | 134 | 0 / 0 / 0 | 0 | 1 |
| progressive | 3696 | 8 | 3688 | 28 / 140 / 515 | 3 | 3 |
| ten_thousand | 136 | 2 | 134 | 0 / 0 / 0 | 0 | 1 |
| trippn | 3696 | 8 | 3688 | 28 / 140 / 515 | 3 | 3 |
| zilch | 162 | 2 | 160 | 0 / 0 / 0 | 0 | 1 |"""


def catalog_sizes_table() -> str:
    """The catalog size table of every preset, computed now (Markdown)."""
    lines = [
        "| preset | n | non-keep moves | keeps | of which read large straight / small straight first / three pairs first | alternate (fill) keeps | catalog version |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in preset_names():
        s = ActionCatalog(preset(name)).summary()
        readings = f"{s['large_first']} / {s['small_first']} / {s['pairs_first']}"
        lines.append(
            f"| {name} | {s['n']} | {s['non_keep']} | {s['keeps']} | {readings} | {s['fill_alternates']} | {s['version']} |"
        )
    return "\n".join(lines)


def catalog_layout_table() -> str:
    """Per preset: the id of every non-keep move and the id range of the keeps (Markdown)."""
    lines = ["| preset | non-keep ids | keep ids |", "|---|---|---|"]
    for name in preset_names():
        cat = ActionCatalog(preset(name))
        moves = ", ".join(f"{e.index} `{e.kind}`" for e in cat.entries if e.kind != "keep")
        first = next(e.index for e in cat.entries if e.kind == "keep")
        lines.append(f"| {name} | {moves} | {first}..{cat.n - 1} |")
    return "\n".join(lines)


_READING_MARKS = {"": "", "large": "L", "small": "S", "pairs": "P"}


def keep_list(name: str) -> str:
    """Every keep action of a preset as ``id: faces``, one line per number of dice."""
    cat = ActionCatalog(preset(name))
    by_size: dict[int, list[str]] = {}
    for e in cat.entries:
        if e.kind == "keep":
            faces = "".join(map(str, e.dice)) + _READING_MARKS[e.reading] + ("F" if e.fills else "")
            by_size.setdefault(len(e.dice), []).append(f"{e.index}:{faces}")
    return "\n".join(
        f"- {size} {'die' if size == 1 else 'dice'}: " + " ".join(items)
        for size, items in sorted(by_size.items())
    )


def generated_block() -> str:
    """The generated part of ``docs/envs.md``, markers included."""
    return "\n".join(
        [
            BEGIN,
            "",
            f"### Action catalog sizes (newest catalog version {ACTION_CATALOG_VERSION})",
            "",
            catalog_sizes_table(),
            "",
            "### Action ids",
            "",
            catalog_layout_table(),
            "",
            "Keeps of `ten_thousand` (`id:faces`):",
            "",
            keep_list("ten_thousand"),
            "",
            f"### Observation index table (spec version {OBS_SPEC_VERSION}, {OBS_DIM} entries)",
            "",
            observation_table(),
            "",
            END,
        ]
    )


def render(text: str) -> str:
    """Replace the generated block of a Markdown text (which must contain the markers)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"markers {BEGIN} ... {END} not found")
    return text[:start] + generated_block() + text[end + len(END) :]
