"""The package's floors (docs/developing.md, "Layout and floors"): each floor is a package of ocg/,
a module imports only from its own floor or below, no two modules import each other in a circle,
no two modules share a name, and none shadows the standard library. Every import counts, those
inside functions included."""

import ast
import sys
from pathlib import Path

import networkx

import ocg

ROOT = Path(ocg.__file__).parent

# Lowest first: each floor is one or two packages of ocg/, so `ls ocg` shows them.
FLOORS = [
    ("core", ["ocg", "ocg.core"]),
    ("records and weights", ["ocg.records", "ocg.weights"]),
    ("config", ["ocg.config"]),
    ("data", ["ocg.data"]),
    ("generation and metrics", ["ocg.generation", "ocg.metrics"]),
    ("scoring", ["ocg.scoring"]),
    ("results", ["ocg.results"]),
    ("analysis", ["ocg.analysis"]),
    ("site", ["ocg.site"]),
    ("jobs", ["ocg.jobs", "ocg.sweep"]),
    ("harnesses", ["ocg.harness"]),
    ("command line", ["ocg.cli"]),
]


def module_name(path: Path) -> str:
    parts = ["ocg", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(module: str) -> int:
    """The floor of a module: that of its package under ocg/ (ocg's own __init__ is the ground)."""
    top = ".".join(module.split(".")[:2])
    found = [i for i, (_, packages) in enumerate(FLOORS) if top in packages or module == "ocg"]
    assert found, f"{module} is on no floor: put it in a package of FLOORS (docs/developing.md)"
    return found[0]


def imports(path: Path) -> set[str]:
    """The ocg modules a file imports (absolute or relative, anywhere in the file)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "ocg"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "ocg":
                continue
            # `from .. import metrics` imports the module ocg.metrics, not the package above it
            subs = {
                f"{target}.{a.name}"
                for a in node.names
                if (ROOT.parent / f"{target}.{a.name}".replace(".", "/"))
                .with_suffix(".py")
                .exists()
                or (ROOT.parent / f"{target}.{a.name}".replace(".", "/")).is_dir()
            }
            found |= subs or {target}
    return found


def sources() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def test_no_module_imports_from_a_floor_above_its_own():
    upward = [
        f"{module_name(p)} ({FLOORS[floor(module_name(p))][0]}) imports {t} ({FLOORS[floor(t)][0]})"
        for p in sources()
        for t in sorted(imports(p))
        if floor(t) > floor(module_name(p))
    ]
    assert not upward, "\n".join(upward)


def test_the_check_sees_imports_inside_functions():
    assert "ocg.generation.backends.transformers_backend" in imports(
        ROOT / "generation" / "backends" / "__init__.py"
    )  # inside a function
    assert floor("ocg.generation.backends.synthetic") > floor(
        "ocg.config.model_registry"
    )  # the import that once ran back up


def _graph() -> dict[str, set[str]]:
    """Module -> the ocg modules it imports (a package's __init__ stands for the package)."""
    known = {module_name(p) for p in sources()}
    return {module_name(p): {t for t in imports(p) if t in known} for p in sources()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of more than one module that import each other, directly or round about."""
    found = networkx.strongly_connected_components(networkx.DiGraph(graph))
    return sorted(sorted(group) for group in found if len(group) > 1)


def test_no_modules_import_each_other_in_a_circle():
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in _graph().items()}
    assert not _circles(graph), _circles(graph)


def test_the_circle_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_floors_are_folders():
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(loose) <= 4, f"modules loose at ocg/'s root: {loose}; put them in a floor's package"
    names = {}
    for p in sources():
        if p.name not in ("__init__.py", "__main__.py"):
            names.setdefault(p.stem, []).append(module_name(p))
    shared = {n: ms for n, ms in names.items() if len(ms) > 1}
    assert not shared, f"modules that share a name: {shared}"
    shadowing = sorted(n for n in names if n in sys.stdlib_module_names)
    assert not shadowing, f"modules named as the standard library's: {shadowing}"


def test_the_developing_guide_names_every_floor():
    guide = (ROOT.parent / "docs" / "developing.md").read_text()
    missing = [name for name, _ in FLOORS if f"**{name}**" not in guide]
    assert not missing, f"docs/developing.md's layout section should name floors {missing}"


def test_the_website_stands_above_the_analyses():
    """The paper's tables and figures (analysis/) never reach up into the report website (site/)."""
    assert floor("ocg.site.landing") == floor("ocg.analysis.paper_tables") + 1
    reach_up = [
        module_name(p)
        for p in sources()
        if module_name(p).startswith("ocg.analysis")
        and any(t.startswith("ocg.site") for t in imports(p))
    ]
    assert not reach_up, reach_up
