"""ocg as a user installs it: a wheel built from this checkout, installed into a folder of its own,
run from outside the checkout. `ocg score`, `load_scores` and the report's pages must work with no
docs/ or params/ beside them (the frame schema is code; the shipped params travel in the wheel as
ocg/params, docs/METHODS.md as ocg/docs/METHODS.md, the pages' templates as package data)."""

import html
import re
import subprocess
import sys

import pytest

from ocg.core.paths import PROJECT_ROOT
from ocg.site.browser import read_index
from ocg.site.methods_page import slug
from tests.helpers import checkout_copy, write_generations


@pytest.mark.slow
def test_score_and_load_scores_from_an_installed_wheel(tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(checkout_copy(tmp_path / "source")),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("ocg-*.whl")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    schemas = site / "ocg" / "params" / "schema"  # editors' schemas travel with the YAML files
    assert sorted(p.name for p in schemas.glob("*.json")) == sorted(
        f"{kind}.schema.json" for kind in ("models", "run", "sweep", "scoring", "templates")
    )
    rows = [
        {
            "set_id": "s1",
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": ["The boy rides a bike down the street.", "A bike."][p % 2],
        }
        for t in (0, 1)
        for p in range(4)
    ]
    for condition in ("original", "ordered"):
        write_generations(tmp_path / "gen", "m", rows, condition)
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    score = subprocess.run(
        [
            sys.executable,
            "-m",
            "ocg.cli",
            "score",
            "--generations",
            "gen",
            "--out",
            "scores",
            "--metrics",
            "coverage",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert score.returncode == 0, score.stderr[-2000:]
    code = (
        "import ocg; from ocg.results.scores import load_scores; s = load_scores('scores'); "
        "print(ocg.__file__); print(s.summary.set_index('condition').coverage_w_order.mean())"
    )
    load = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert load.returncode == 0, load.stderr[-2000:]
    where, coverage = load.stdout.split()
    assert where.startswith(str(site)), "the installed ocg ran, not the checkout's"
    assert float(coverage) == 50.0  # half the answers hold every concept in order
    _the_pages_render_from_the_wheel(site, tmp_path, env)
    _outputs_and_report_from_the_wheel(site, tmp_path, env)


def _outputs_and_report_from_the_wheel(site, tmp_path, env):
    """No checkout: outputs default to the working directory's outputs/ (never site-packages),
    and `ocg report` says in one line that it needs a checkout, naming where it looked."""
    code = "from ocg.core.paths import SOURCE_CHECKOUT, outputs_dir; print(SOURCE_CHECKOUT, outputs_dir())"
    where = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert where.stdout.split() == ["False", str(tmp_path / "outputs")], where.stderr[-2000:]
    run = site / "ocg" / "params" / "runs" / "demo.yaml"
    report = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "report", str(run)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 2 and report.stderr.count("ocg: error: ") == 1, report.stderr
    assert f"no notebooks in {site / 'notebooks'}" in report.stderr, report.stderr
    assert "need a source checkout" in report.stderr and not (site / "outputs").exists()


def _the_pages_render_from_the_wheel(site, tmp_path, env):
    """The landing page, case browser and methods page, written by the installed ocg from its
    own templates and its own copy of docs/METHODS.md."""
    code = (
        "from pathlib import Path; from ocg.core.paths import METHODS_FILE; "
        "from ocg.config.checked_run import CheckedRun; from ocg.config.run_file import RunFile; "
        "from ocg.config.model_registry import MODELS_FILE; from ocg.scoring import load_scoring_config; "
        "from ocg.site.landing import write_index; "
        "file = RunFile.model_validate({'name': 'r', 'models': ['m'], 'conditions': ['original', 'ordered']}); "
        "run = CheckedRun(file, {}, MODELS_FILE, load_scoring_config(), Path('r')); "
        "write_index('report', 'wheel', [], run=run, scores_root='scores', generations_root='gen'); "
        "print(METHODS_FILE)"
    )
    pages = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert pages.returncode == 0, pages.stderr[-2000:]
    assert pages.stdout.strip() == str(site / "ocg" / "docs" / "METHODS.md")
    report = tmp_path / "report"
    methods = (report / "methods.html").read_text()
    source = (PROJECT_ROOT / "docs" / "METHODS.md").read_text()
    headings = re.findall(r"^## (.+)$", source, re.M)
    assert len(headings) > 5 and '<nav id="contents">' in methods
    for heading in headings:
        assert f'<h2 id="{slug(heading)}">{html.escape(heading, quote=False)}</h2>' in methods
    index = (report / "index.html").read_text()
    assert "<h1>wheel</h1>" in index and "<code>m</code>" in index and "href='cases.html'" in index
    cases = (report / "cases.html").read_text()
    assert "function csvCell" in cases and read_index(report / "cases.html")[0]["model"] == "m"
