"""Documentation tables generated from the rules code, so the docs cannot drift.

``docs/rules.md`` holds these tables between ``<!-- BEGIN GENERATED -->`` and
``<!-- END GENERATED -->`` markers; ``python -m greed_env.rules.docs docs/rules.md`` rewrites
them and a test checks the committed file is current.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import fields

from greed_env.rules.config import PRESET_SOURCES, PRESETS, Rules

BEGIN = "<!-- BEGIN GENERATED -->"
END = "<!-- END GENERATED -->"


def _fmt(value: object) -> str:
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) for v in value):
            return "; ".join(
                f"{'-'.join(map(str, v[0]))}: {v[1]}" if isinstance(v[0], tuple) else str(v)
                for v in value
            )
        return ", ".join(map(str, value)) if value else "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def presets_table() -> str:
    """Markdown table: one column per preset, one row per field that differs anywhere."""
    names = list(PRESETS)
    rows = ["| field | " + " | ".join(f"`{n}`" for n in names) + " |"]
    rows.append("|---|" + "---|" * len(names))
    rows.append("| source | " + " | ".join(PRESET_SOURCES[n] for n in names) + " |")
    for f in fields(Rules):
        if f.name == "name":
            continue
        values = [getattr(PRESETS[n], f.name) for n in names]
        rows.append(f"| `{f.name}` | " + " | ".join(_fmt(v) for v in values) + " |")
    return "\n".join(rows)


def fields_table() -> str:
    """Markdown table of every field with its default and documentation."""
    default = Rules()
    rows = ["| field | default | meaning (with the seed sentence it comes from) |", "|---|---|---|"]
    for f in fields(Rules):
        doc = f.metadata.get("doc", "").replace("|", "\\|")
        rows.append(f"| `{f.name}` | {_fmt(getattr(default, f.name))} | {doc} |")
    return "\n".join(rows)


def generated_block() -> str:
    return "\n".join(
        [
            BEGIN,
            "",
            "### Presets",
            "",
            presets_table(),
            "",
            "### Every field",
            "",
            fields_table(),
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "docs/rules.md"
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    new = render(text)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(new)
    os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # the rewritten doc keeps its mode, not mkstemp's 0600
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
