"""The package's floors (docs/developing.md, "Layout and floors"): a module imports only from its own floor or below,
and no module grows past 300 lines. Every import counts, those inside functions included."""

import ast
from pathlib import Path

import ocg

ROOT = Path(ocg.__file__).parent

# Lowest first. A module belongs to the longest prefix listed here.
FLOORS = [
    (
        "foundation",
        [
            "ocg",
            "ocg.errors",
            "ocg.paths",
            "ocg.io",
            "ocg.yaml_io",
            "ocg.config",
            "ocg.names",
            "ocg.schema",
            "ocg.frames",
            "ocg.provenance",
            "ocg.hub",
            "ocg.layout",
            "ocg.records",
            "ocg.parallel",
            "ocg.notebook_parameters",
            "ocg.notebook_names",
            "ocg.lock",
            "ocg.embedded",
        ],
    ),
    ("inputs", ["ocg.data", "ocg.models"]),
    ("generation and metrics", ["ocg.generation", "ocg.metrics"]),
    ("scoring", ["ocg.scoring"]),
    ("results", ["ocg.designs", "ocg.results"]),
    ("analysis", ["ocg.analysis"]),
    (
        "running",
        [
            "ocg.plan",
            "ocg.runconfig",
            "ocg.notebook_runner",
            "ocg.pipeline",
            "ocg.staging",
            "ocg.sweep",
        ],
    ),
    ("command line", ["ocg.cli"]),
]
MAX_LINES = 300


def module_name(path: Path) -> str:
    parts = ["ocg", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(module: str) -> int:
    best = max(
        (
            (len(prefix), i)
            for i, (_, prefixes) in enumerate(FLOORS)
            for prefix in prefixes
            if module == prefix or module.startswith(prefix + ".")
        ),
        default=None,
    )
    assert best is not None, f"{module} is on no floor: add it to FLOORS and docs/developing.md"
    return best[1]


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
    assert "ocg.generation.hf_backend" in imports(
        ROOT / "generation" / "backends.py"
    )  # inside a function
    assert floor("ocg.generation.synthetic") > floor(
        "ocg.models"
    )  # the import that once ran back up


def test_no_module_is_over_300_lines():
    long = {
        module_name(p): n for p in sources() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these modules by concern: {long}"


def test_the_developing_guide_names_every_floor():
    guide = (ROOT.parent / "docs" / "developing.md").read_text()
    missing = [name for name, _ in FLOORS if f"**{name}**" not in guide]
    assert not missing, f"docs/developing.md's layout section should name floors {missing}"
