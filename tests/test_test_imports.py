"""Tests import like a package (docs/developing.md, "Tests"): `from tests.helpers import ...`,
never a test module (its fixtures live in a conftest.py, its helpers in a module of their own) and
never a tests/ module by a bare name (that worked only while conftest put tests/ on sys.path).
Every import counts, those inside functions included."""

import ast
from pathlib import Path

TESTS = Path(__file__).parent
DATA = {"fixtures", "data", "__pycache__"}  # folders of inputs, no Python of the tests


def python_sources():
    """Every Python file of the tests (test modules, helpers, conftest files), data folders aside."""
    return sorted(p for p in TESTS.rglob("*.py") if not DATA & set(p.relative_to(TESTS).parts[:-1]))


def dotted(path: Path) -> str:
    """tests/analysis/notebooks.py -> tests.analysis.notebooks."""
    return ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)


def imported(tree: ast.AST, module: str) -> list[str]:
    """The dotted name of everything imported, relative imports resolved against `module`; a name
    imported from a package also as package.name (it may be a module)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level]
                base = ".".join([*package, *([base] if base else [])])
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return names


def offences(source: str, module: str, bare: set[str]) -> list[str]:
    """The imports of `source` that reach a test module, or a tests/ module by a bare name."""
    found = []
    for name in imported(ast.parse(source), module):
        parts = name.split(".")
        if any(part.startswith("test_") for part in parts):
            found.append(f"{name}: a test module")
        elif parts[0] in bare:
            found.append(f"{name}: a tests/ module by a bare name (write tests.…)")
    return found


def bare_names() -> set[str]:
    """What a tests/ module or folder would be called were tests/ or its folders on sys.path."""
    return {p.stem for p in python_sources()} | {
        d.name for d in TESTS.iterdir() if d.is_dir() and d.name not in DATA
    }


def test_no_test_module_imports_another_or_a_tests_module_by_a_bare_name():
    bare = bare_names() - {"__init__", "conftest"}
    found = {
        str(p.relative_to(TESTS.parent)): offences(p.read_text(), dotted(p), bare)
        for p in python_sources()
    }
    assert not {p: o for p, o in found.items() if o}


def test_the_check_sees_each_kind_of_offence():
    bare = bare_names()
    assert offences("from test_hostile import cli", "tests.test_x", bare)
    assert offences("from tests.site.test_browser import chromium", "tests.test_x", bare)
    assert offences("from tests.analysis import test_browser", "tests.test_x", bare)
    assert offences("def f():\n    from .test_api_backend import KEY", "tests.generation.x", bare)
    assert offences("import helpers", "tests.test_x", bare)
    assert offences("from slurm_cluster import cluster_for_test", "tests.sweep.test_x", bare)
    assert not offences("from tests.helpers import write_generations", "tests.test_x", bare)
    assert not offences("from .scripted_server import KEY", "tests.generation.x", bare)
    assert not offences("import json\nfrom ocg.cli import main", "tests.test_x", bare)


def test_every_folder_of_tests_is_a_package():
    folders = {p.parent for p in python_sources()}
    assert not [str(d) for d in folders if not (d / "__init__.py").exists()]
