"""docs/METHODS.md as a page of every report (methods.html), with a table of contents and an
anchor per section, and the links that land on those anchors."""

from __future__ import annotations

import html
import re
from pathlib import Path

from ..core.layout import ReportFolder
from ..core.paths import PROJECT_ROOT

METHODS_FILE = PROJECT_ROOT / "docs" / "METHODS.md"


def _esc(x) -> str:
    return html.escape(str(x))


def slug(title: str) -> str:
    """A section's anchor in methods.html: its title, lower-cased, runs of other characters as '-'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def methods_link(report_dir: Path, section: str) -> str:
    """A link to one section of methods.html (`section`: a heading of docs/METHODS.md)."""
    href = f"{ReportFolder(report_dir).methods.name}#{slug(section)}"
    return f"<a href='{_esc(href)}'>docs/METHODS.md, “{_esc(section)}”</a>"


def write_methods(report_dir: Path) -> Path | None:
    """docs/METHODS.md as a page of the report (escaped: no raw HTML of the file reaches it)."""
    import mistune

    from ..core.files import atomic_path

    if not METHODS_FILE.exists():
        return None
    from mistune.toc import add_toc_hook, render_toc_ul

    markdown = mistune.create_markdown(escape=True, plugins=["table"])
    add_toc_hook(
        markdown, min_level=2, max_level=3, heading_id=lambda token, index: slug(token["text"])
    )
    body, state = markdown.parse(METHODS_FILE.read_text(encoding="utf-8"))
    body = (
        "<nav id='contents'><b>Contents</b>"
        + render_toc_ul(state.env["toc_items"])
        + "</nav>\n"
        + body
    )
    path = ReportFolder(report_dir).methods
    with atomic_path(path) as tmp:
        tmp.write_text(
            "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>ocg: methods</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:60em;margin:1.5em auto;padding:0 1em;"
            "line-height:1.5}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em}"
            "code{background:#f4f4f4}</style></head><body>\n" + body + "\n</body></html>\n",
            encoding="utf-8",
        )
    return path
