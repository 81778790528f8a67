"""docs/METHODS.md as a page of every report (methods.html), with a table of contents and an
anchor per section, and the links that land on those anchors."""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import Markup

from ..core.files import atomic_path
from ..core.layout import ReportFolder
from ..core.paths import METHODS_FILE
from .render import Link, render


def slug(title: str) -> str:
    """A section's anchor in methods.html: its title, lower-cased, runs of other characters as '-'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def methods_link(report_dir: Path, section: str) -> Link:
    """A link to one section of methods.html (`section`: a heading of docs/METHODS.md)."""
    return Link(
        f"{ReportFolder(report_dir).methods.name}#{slug(section)}", f"docs/METHODS.md, “{section}”"
    )


def write_methods(report_dir: Path) -> Path:
    """docs/METHODS.md as a page of the report (escaped: no raw HTML of the file reaches it)."""
    import mistune
    from mistune.toc import add_toc_hook, render_toc_ul

    if not METHODS_FILE.is_file():  # a wheel ships it as ocg/docs/METHODS.md: a broken install
        raise FileNotFoundError(
            f"{METHODS_FILE}: docs/METHODS.md is missing (an installed ocg carries it as "
            "ocg/docs/METHODS.md); every report links its methods page"
        )
    markdown = mistune.create_markdown(escape=True, plugins=["table"])
    add_toc_hook(
        markdown, min_level=2, max_level=3, heading_id=lambda token, index: slug(token["text"])
    )
    body, state = markdown.parse(METHODS_FILE.read_text(encoding="utf-8"))
    path = ReportFolder(report_dir).methods
    with atomic_path(path) as tmp:
        tmp.write_text(
            render(
                "methods_page.html",
                # mistune wrote this HTML from our own Markdown, with any raw HTML in it escaped
                contents=Markup(render_toc_ul(state.env["toc_items"])),
                body=Markup(body),
            ),
            encoding="utf-8",
        )
    return path
