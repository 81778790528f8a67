"""The tests never read the user's outputs/: `make demo` then `make test` is green. tests/conftest.py
gives every test an OCG_OUTPUTS of its own; here the tests that tripped over a populated outputs
folder (a hint that names the outputs' scores, a relative `outputs:` resolved under OCG_OUTPUTS) run
in a fresh pytest with OCG_OUTPUTS at a folder that looks like the demo's."""

import os
import subprocess
import sys

from ocg.core.paths import PROJECT_ROOT
from ocg.results.scores import nothing_scored

SENSITIVE = [
    "tests/config/test_inputs.py::test_analyses_name_models_without_scores",
    "tests/config/test_inputs.py::test_a_run_file_says_where_its_outputs_go",
    "tests/jobs/test_shipped_runs.py::test_every_shipped_run_file_writes_into_a_folder_of_its_own",
    "tests/core/test_layout.py",
]


def populated_outputs(root):
    """A small outputs folder as `make demo` leaves one: scores, generations, a report."""
    (root / "scores" / "demo-model").mkdir(parents=True)
    (root / "scores" / "demo-model" / "signature.json").write_text("{}")
    (root / "generations" / "demo-model").mkdir(parents=True)
    (root / "generations" / "demo-model" / "ordered.jsonl").write_text('{"answer": "x"}\n')
    (root / "reports" / "demo").mkdir(parents=True)
    (root / "reports" / "demo" / "index.html").write_text("<p>demo</p>")
    return root


def listing(root):
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_the_suite_ignores_a_populated_outputs_folder(tmp_path, monkeypatch):
    user = populated_outputs(tmp_path / "user-outputs")
    monkeypatch.setenv("OCG_OUTPUTS", str(user))
    # the folder is populated enough to change what ocg says when the tests read it
    assert "the outputs' scores are in" in nothing_scored(tmp_path / "elsewhere", None)
    before = listing(user)
    env = dict(os.environ, OCG_OUTPUTS=str(user))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *SENSITIVE],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout + result.stderr
    assert listing(user) == before  # nothing read into, nothing written there either
