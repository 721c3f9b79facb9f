"""Sphinx configuration of the greed_env documentation site (MyST Markdown, the furo theme).

Build: ``sphinx-build -W --keep-going docs docs/_build/html`` (``pip install -e ".[docs]"``).
The pages are the Markdown files of ``docs/`` as they read on GitHub; the API reference is
generated from the docstrings. A link from a page to a file outside ``docs/`` is resolved here:
to the site page that includes it (``agents/README.md``, ``CHANGELOG.md``), to plain text
naming the file when it exists in the repository, and to a warning (an error under ``-W``)
when it does not.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import greed_env  # noqa: E402  (the package documented, from this checkout)

project = "greed_env"
author = "greed_env developers"
copyright = "greed_env developers"
release = greed_env.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]
html_theme = "furo"
html_title = f"greed_env {release}"
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # the package documents its own methods, not gymnasium's
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
# heavy optional stacks are not needed to read the docstrings
autodoc_mock_imports = ["torch", "stable_baselines3", "sb3_contrib", "ray", "onnxruntime", "onnx", "tianshou", "torchrl"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # NamedTuple fields are documented once, by autodoc

# files outside docs/ that are pages of the site, by their path from the repository root
OUTSIDE_PAGES = {
    "agents/README.md": "shipped-bots",
    "CHANGELOG.md": "changelog",
}



class OutsideLinks(SphinxPostTransform):
    """Resolve Markdown links to files outside ``docs/`` before MyST reports them missing."""

    default_priority = 5  # before MyST's own resolver (9)

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst":
                continue
            path = self._outside_path(node)
            if path is None:
                continue
            rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else None
            if rel in OUTSIDE_PAGES:
                node["refdomain"] = "doc"
                node["reftarget"] = OUTSIDE_PAGES[rel]
                node.setdefault("reftargetid", None)
            elif path.exists():
                node.replace_self(nodes.literal(text=node.astext()))
            # else: left for MyST, which warns that the target is missing

    def _outside_path(self, node: addnodes.pending_xref) -> Path | None:
        """The file a link names when it lies outside ``docs/``, else None."""
        target = str(node.get("reftarget", ""))
        if not target or "://" in target or target.startswith(("#", "mailto:")):
            return None
        if node.get("refdomain") == "doc":
            # MyST names a Markdown file outside the source folder by its absolute path
            # without the suffix; a page of the site has a relative docname
            return Path(target + ".md").resolve() if Path(target).is_absolute() else None
        source = Path(node.source) if node.source else Path(self.env.doc2path(self.env.docname))
        path = (source.parent / target.split("#", 1)[0]).resolve()
        return None if path.is_relative_to(DOCS) else path


def markdown_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Read the Markdown parts of a docstring written in Gymnasium's env template (``## Section``
    headings, pipe tables) as reStructuredText: a heading becomes a rubric, a table a literal
    block, so the generated tables of the env docstrings show as they are written."""
    if not any(line.startswith("## ") or line.startswith("|---") for line in lines):
        return
    out: list[str] = []
    table = False
    for line in lines:
        if line.startswith("|"):
            if not table:
                out += ["::", ""]
                table = True
            out.append("    " + line)
            continue
        if table:
            out.append("")
            table = False
        out += [f".. rubric:: {line[3:].strip()}", ""] if line.startswith("## ") else [line]
    lines[:] = out


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_post_transform(OutsideLinks)
    app.connect("autodoc-process-docstring", markdown_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
