"""The pages come from templates: no module of ocg/site writes HTML, what a section gives is
escaped where a page shows it, a name a template does not get fails loudly, and every template
and static file travels in a wheel (pyproject.toml's package data)."""

import ast
import re
from fnmatch import fnmatch

import jinja2
import pandas as pd
import pytest

from ocg.core.paths import PACKAGE, PROJECT_ROOT
from ocg.site.explain import LegendItem, Unreadable
from ocg.site.model_table import ModelRow, Status
from ocg.site.render import Link, fragment, frame, render

SITE = PACKAGE / "site"
TAG = re.compile(
    r"<(a|b|p|br|td|th|tr|div|span|code|h\d|li|ul|ol|dl|dt|dd|table|details|figure)[\s>/]"
)


def _strings(tree):
    """Every string constant of a module but its docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_module_of_the_site_writes_html():
    written = {
        path.name: hits
        for path in SITE.glob("*.py")
        if (hits := [s for s in _strings(ast.parse(path.read_text())) if TAG.search(s)])
    }
    assert written == {}
    assert not [p.name for p in SITE.glob("*.py") if "_esc" in p.read_text()]


def test_what_a_section_gives_is_shown_as_text():
    hostile = "<script>alert(1)</script>'\""
    row = ModelRow(
        hostile, Status("failed", detail=hostile), 1, hostile, hostile, hostile, hostile, [hostile]
    )
    shown = fragment("models.html", "model_rows", [row])
    assert "<script>" not in shown and shown.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 7
    link = fragment("macros.html", "a", Link("x' onclick='y", hostile))
    assert link == (
        "<a href='x&#39; onclick=&#39;y'>&lt;script&gt;alert(1)&lt;/script&gt;&#39;&#34;</a>"
    )
    assert "&lt;b&gt;" in fragment("macros.html", "unreadable", Unreadable("<b>", "KeyError: x"))
    legend = fragment("macros.html", "legend", [LegendItem("<i>", "w", "%", True)])
    assert "<dt>&lt;i&gt;</dt><dd>w (%; ↑ higher is better)</dd>" in legend
    assert "&lt;m&gt;" in frame(pd.DataFrame({"a": [1.0]}, index=["<m>"]))


def test_a_name_a_template_does_not_get_fails():
    with pytest.raises(jinja2.UndefinedError):
        render("methods_page.html", body="")  # no contents


def test_every_template_and_static_file_is_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    setuptools = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    missing = []
    for folder in ("templates", "static"):
        package = f"ocg.site.{folder}"
        assert package in setuptools["packages"]
        patterns = setuptools["package-data"][package]
        files = [p.name for p in (SITE / folder).rglob("*") if p.is_file()]
        assert files
        missing += [f"{folder}/{f}" for f in files if not any(fnmatch(f, x) for x in patterns)]
    assert missing == []
