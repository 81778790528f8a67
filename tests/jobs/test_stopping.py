"""SIGTERM to a real `ocg report` and a real `ocg generate`: the notebook's
kernel (and anything it started) is shut down, the report says failed, the run card interrupted,
and one `ocg: error:` line says what happened; a local sweep driver stops its task the same way."""

import json
import os
import re
import signal
import subprocess
import sys
import uuid

import pytest
import yaml

from ocg.core.lock import holder
from ocg.core.paths import PROJECT_ROOT
from tests.jobs.small_report import (
    MODEL,
    TAG,
    models_file,
    tagged_processes,
    wait_for,
    write_run,
)

pytestmark = pytest.mark.slow


def start(tmp_path, *args):
    """`ocg ARGS` in a child whose processes (the kernels too) carry a tag of their own."""
    tag = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), **{TAG: tag})
    log = (tmp_path / f"{tag}.log").open("w")
    child = subprocess.Popen(
        [sys.executable, "-m", "ocg.cli", *map(str, args)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return child, tag, tmp_path / f"{tag}.log"


def stopped(child, tag, log) -> str:
    """SIGTERM to the child; its output, once it and everything it started have ended."""
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=120)
    wait_for(lambda: not tagged_processes(tag), 30, "end of every process the command started")
    return log.read_text()


def test_sigterm_to_a_report_shuts_its_kernel_down_and_marks_the_report_failed(tmp_path):
    outputs = tmp_path / "outputs"
    child, tag, log = start(tmp_path, "report", write_run(tmp_path, "stopped", outputs))
    try:
        wait_for(
            lambda: "02_score" in log.read_text() and tagged_processes(tag)[1:],
            1200,
            "report scoring in its kernel",
            child,
        )
    finally:
        out = stopped(child, tag, log)
    assert child.returncode == 143, out[-3000:]
    errors = [
        line for line in re.split(r"[\r\n]", out) if line.startswith("ocg: error: ")
    ]  # after a progress bar
    assert errors == [
        "ocg: error: stopped by signal SIGTERM during `ocg report`; what was finished is kept, "
        "nothing half-done is trusted; rerun to go on"
    ], out[-3000:]
    state = json.loads((outputs / "reports" / "stopped" / "report.json").read_text())
    assert state["state"] == "failed" and "SIGTERM" in state["reason"], state
    assert (
        holder(outputs / "scores" / MODEL) is None
    )  # the score set's lock is free: `ocg score` may run


def test_sigterm_to_a_generate_marks_its_run_interrupted(tmp_path):
    child, tag, log = start(
        tmp_path,
        "generate",
        MODEL,
        "--subset-k",
        1,
        "--templates",
        0,
        1,
        2,
        "--conditions",
        "ordered",
        "--out",
        tmp_path / "gen",
        "--models-file",
        models_file(tmp_path),
    )
    card = tmp_path / "gen" / MODEL / "run_card.json"
    try:
        wait_for(
            lambda: card.exists() and _stored(card.parent / "ordered.jsonl"),
            600,
            "generation under way",
            child,
        )
    finally:
        out = stopped(child, tag, log)
    assert child.returncode == 143, out[-3000:]
    assert [line for line in re.split(r"[\r\n]", out) if line.startswith("ocg: error: ")] == [
        "ocg: error: stopped by signal SIGTERM during `ocg generate`; what was finished is kept, nothing "
        "half-done is trusted; rerun to go on"
    ], out[-3000:]
    written = json.loads(card.read_text())
    assert written["status"] == "interrupted" and written["runs"][-1]["status"] == "interrupted", (
        written["runs"]
    )
    assert "SIGTERM" in written["runs"][-1]["error"]


def test_sigterm_to_a_local_sweep_driver_stops_its_task(tmp_path):
    sweep = {
        "name": "stopped",
        "models": [MODEL],
        "conditions": ["ordered"],
        "subset_k": 1,
        "template_ids": [0],
        "permutations": 2,
        "metrics": ["distinct"],
        "analysis": [],
        "outputs": str(tmp_path / "out"),
        "models_file": str(models_file(tmp_path)),
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sweep))
    child, tag, log = start(tmp_path, "sweep", tmp_path / "s.yaml")
    task_log = tmp_path / "out" / "logs" / f"{MODEL}.log"
    try:
        wait_for(
            lambda: (
                task_log.exists()
                and "01_generate: running" in task_log.read_text()
                and len(tagged_processes(tag)) >= 3
            ),
            1200,
            "the task's kernel",
            child,
        )
    finally:
        out = stopped(child, tag, log)
    assert child.returncode == 143, out[-3000:]
    assert "stopped by signal SIGTERM during `ocg sweep`" in out, out[-3000:]
    assert (
        "stopped by signal SIGTERM during `ocg sweep`" in task_log.read_text()
    )  # the task's own line


def _stored(store) -> bool:
    """A batch is in the store: generation is under way (a log off a terminal has no bar)."""
    return store.exists() and store.stat().st_size > 0
