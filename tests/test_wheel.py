"""ocg as a user installs it: a wheel built from this checkout, installed into a folder of its own,
run from outside the checkout. `ocg score` and `load_scores` must work with no docs/ or params/
beside them (the frame schema is code; the shipped params travel in the wheel as ocg/params)."""

import subprocess
import sys

import pytest

from ocg.core.paths import PROJECT_ROOT
from tests.helpers import write_generations


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
            str(PROJECT_ROOT),
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
        "print(ocg.__file__); print(s['summary'].set_index('condition').coverage_w_order.mean())"
    )
    load = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert load.returncode == 0, load.stderr[-2000:]
    where, coverage = load.stdout.split()
    assert where.startswith(str(site)), "the installed ocg ran, not the checkout's"
    assert float(coverage) == 50.0  # half the answers hold every concept in order
