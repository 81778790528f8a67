"""Every package ocg imports is declared in pyproject.toml, so a wheel installed elsewhere does not
fail at an import; every package declared is pinned in requirements.lock; and building the wheel
warns nothing of ocg's own configuration."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from ocg.core.paths import PROJECT_ROOT
from tests.helpers import checkout_copy, lock_entries
from tests.helpers import normalized_name as _norm

tomllib = pytest.importorskip("tomllib")  # the standard library's from Python 3.11

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())


def _declared(*extras: str) -> set[str]:
    project = PYPROJECT["project"]
    specs = list(project["dependencies"])
    for extra in extras:
        specs += project["optional-dependencies"][extra]
    return {_norm(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec).group()) for spec in specs}


def imported_packages(folder: Path, own: set[str]) -> dict[str, str]:
    """{top-level name: first file importing it} of every absolute import in `folder`'s Python
    files, those inside functions too, less the standard library's and `own`."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        if "fixtures" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in own:
                    found.setdefault(top, str(path.relative_to(folder.parent)))
    return found


def undeclared(imports: dict[str, str], declared: set[str]) -> list[str]:
    """Each import whose distribution (as installed here) is not declared, with where it is."""
    distributions = packages_distributions()
    problems = []
    for top, where in sorted(imports.items()):
        dists = {_norm(d) for d in distributions.get(top, [])}
        if not dists:
            problems.append(f"{where}: imports {top}, which no installed distribution provides")
        elif not dists & declared:
            problems.append(f"{where}: imports {top} ({', '.join(sorted(dists))}), not declared")
    return problems


def test_every_import_of_ocg_is_declared():
    imports = imported_packages(PROJECT_ROOT / "ocg", own={"ocg"})
    assert {"numpy", "wordfreq", "mistune", "sentence_transformers", "nbformat"} <= set(imports)
    extras = [e for e in PYPROJECT["project"]["optional-dependencies"] if e != "test"]
    assert undeclared(imports, _declared(*extras)) == []


def test_every_import_of_the_tests_is_declared_for_testing():
    imports = imported_packages(PROJECT_ROOT / "tests", own={"ocg", "tests"})
    assert "pytest" in imports
    assert undeclared(imports, _declared(*PYPROJECT["project"]["optional-dependencies"])) == []


def test_the_check_finds_an_undeclared_import(tmp_path):
    (tmp_path / "m.py").write_text(
        "def f():\n    import yaml, json\n    from numpy import linalg\n"
    )
    imports = imported_packages(tmp_path, own=set())
    assert sorted(imports) == ["numpy", "yaml"]
    assert (
        len(undeclared(imports, {"numpy"})) == 1
        and "imports yaml (pyyaml)" in undeclared(imports, {"numpy"})[0]
    )


def test_every_declared_package_is_pinned_in_the_lock():
    lock, _ = lock_entries()
    missing = sorted(_declared(*PYPROJECT["project"]["optional-dependencies"]) - set(lock))
    assert missing == []
    project = PYPROJECT["project"]
    for spec in project["dependencies"] + sum(project["optional-dependencies"].values(), []):
        name, pinned, version = spec.partition("==")
        if pinned:  # a version pyproject pins (the type checker's) is the lock's
            assert lock[_norm(name)] == version.split()[0], spec


def test_the_wheel_builds_without_a_warning_and_says_it_is_typed(tmp_path):
    """setuptools warns of a deprecated field or of a folder the wheel holds but `packages` does
    not list; ocg.params and the site's templates are such folders of data."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(tmp_path), str(checkout_copy(tmp_path / "source"))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    assert "warning" not in (build.stdout + build.stderr).lower(), build.stderr[-3000:]
    (wheel,) = tmp_path.glob("ocg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "ocg/py.typed",
        "ocg/params/runs/demo.yaml",
        "ocg/data/paper/paper_table7_reasoning.csv",
    } <= names
    (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "License-Expression: MIT" in metadata
