"""The report's pages from jinja2 templates (ocg/site/templates/), autoescaped: every value a
section hands a page is shown as text. The few fragments that are HTML already are marked Markup
in one place each: a pandas table here (`frame`), a package's own style sheet or script here
(`static`), and docs/METHODS.md rendered by mistune with its raw HTML escaped (methods_page.py).
Style sheets and scripts are inlined, so each page opens from disk (file://) with no server."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import jinja2
import pandas as pd
from markupsafe import Markup


@dataclass(frozen=True)
class Link:
    """An <a> of a page: where it goes and its text (both escaped by the template)."""

    href: str
    text: str


def frame(df: pd.DataFrame, floats: bool = True, table_id: str | None = None) -> Markup:
    """A table as pandas writes it (cells escaped by pandas): two decimals and '–' for a missing
    value (`floats`; False: pandas' own number format), every row's first cell its key (no
    rowspan), which the page's .scroll keeps in view; `table_id` its <table id> (what `ocg
    verify` reads it by: site/verify.py)."""
    if not floats:
        return Markup(  # pandas escaped every cell
            df.to_html(border=0, escape=True, na_rep="–", table_id=table_id)
        )
    return Markup(  # pandas escaped every cell
        df.to_html(
            table_id=table_id,
            float_format=lambda v: f"{v:.2f}",
            na_rep="–",
            border=0,
            escape=True,
            sparsify=None if df.index.nlevels == 1 else False,
        )
    )


@cache
def static_text(name: str) -> str:
    """A style sheet or script of ocg/site/static/, as shipped in the package."""
    return files("ocg.site").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def static(name: str) -> Markup:
    """A package file inlined into a <style> or <script> of a page: ocg's own code, not data."""
    return Markup(static_text(name))


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ocg.site", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a name a section did not give fails, not shows ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["frame"] = frame
    env.globals["static"] = static
    return env


def render(template: str, **context) -> str:
    """A page of ocg/site/templates/ filled in with `context`."""
    return _environment().get_template(template).render(**context)


def fragment(template: str, macro: str, *args) -> str:
    """One macro of a template with its arguments, as the page shows it (for a section alone)."""
    return str(getattr(_environment().get_template(template).module, macro)(*args))
