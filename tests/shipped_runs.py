"""A shipped run file (params/runs/) reported into a temp folder, the way a user runs it, so a
test can read (and tamper with) the report `ocg report` built and verified."""

import subprocess
import sys
from pathlib import Path

import yaml

from ocg.core.paths import PARAMS_DIR, PROJECT_ROOT

RUNS = PARAMS_DIR / "runs"


def shipped_run(name: str) -> dict:
    """params/runs/<name>.yaml as read."""
    return yaml.safe_load((RUNS / f"{name}.yaml").read_text())


def report_shipped_run(name: str, tmp: Path, timeout: float = 1500, **changes) -> Path:
    """`ocg report` on params/runs/<name>.yaml with `changes` applied and its outputs under
    tmp/outputs (its `models_file`, relative to params/runs/, made absolute: the copy lives in
    tmp); the report folder, once `ocg report` exits 0 (else the assertion shows its stderr)."""
    run = shipped_run(name) | changes
    run["outputs"] = str(tmp / "outputs")
    if "models_file" in run and not Path(run["models_file"]).is_absolute():
        run["models_file"] = str((RUNS / run["models_file"]).resolve())
    run_file = tmp / f"{name}.yaml"
    run_file.write_text(yaml.safe_dump(run))
    done = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "report", str(run_file)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "outputs" / "reports" / run["name"]
