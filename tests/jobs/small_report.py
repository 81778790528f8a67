"""A small real report (the embedded model, 1 concept set, 2 orders, template 0, the CPU metrics,
notebook 03) for the tests that stop or race reports, and the processes a test started.

`python small_report.py RUN_FILE [PAUSE_DIR]` runs `ocg report RUN_FILE`; with PAUSE_DIR it writes
PAUSE_DIR/ready when its first analysis is about to start (its score sets are taken by then) and
waits for PAUSE_DIR/go: another report can then rescore the same outputs meanwhile."""

import os
import sys
import time
from pathlib import Path

import yaml

MODEL = "smollm2-135m-instruct"
TAG = "OCG_TEST_TAG"  # set in each child of a test, to find what it left running


def models_file(folder: Path) -> Path:
    """The embedded model with short answers and no batch-1 check: minutes less on a busy CPU."""
    models = folder / "models.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "models": {
                    MODEL: {
                        "id": f"embedded:{MODEL}",
                        "quantization": "none",
                        "max_new_tokens": 12,
                        "batch_size": 8,
                        "batch_check": 0,
                    }
                }
            }
        )
    )
    return models


def write_run(folder: Path, name: str, outputs: Path, **extra) -> Path:
    """A run file of the small report."""
    models = models_file(folder)
    run = {
        "name": name,
        "n_concepts": 4,
        "subset_k": 1,
        "permutations": 2,
        "template_ids": [0],
        "conditions": ["original", "ordered"],
        "models": [MODEL],
        "models_file": str(models),
        "metrics": ["coverage", "pbleu", "distinct", "diverse"],
        "analysis": ["03_main_results"],
        "outputs": str(outputs),
        **extra,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


def tagged_processes(tag: str) -> list[str]:
    """The processes alive now whose environment holds TAG=tag, as 'pid cmdline'."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
            if f"{TAG}={tag}".encode() in env:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie has ended; only its parent has not read its status
                    command = (
                        (proc / "cmdline")
                        .read_bytes()
                        .replace(b"\0", b" ")
                        .decode(errors="replace")
                    )
                    found.append(f"{proc.name} {command}")
        except OSError:
            continue
    return found


def wait_for(predicate, timeout: float, what: str, child=None) -> None:
    deadline = time.time() + timeout
    while not predicate():
        if child is not None and child.poll() is not None:
            raise AssertionError(f"the child ended (exit {child.returncode}) before {what}")
        if time.time() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.5)


if __name__ == "__main__":
    from ocg.cli import main
    from ocg.core.notebook_names import ANALYSES
    from ocg.jobs import pipeline

    if len(sys.argv) > 2:
        pause, real_step = Path(sys.argv[2]), pipeline.run_step

        def paused_step(notebook, *args, **kwargs):
            if notebook in ANALYSES and not (pause / "go").exists():
                (pause / "ready").write_text(str(os.getpid()))
                while not (pause / "go").exists():
                    time.sleep(0.2)
            return real_step(notebook, *args, **kwargs)

        pipeline.run_step = paused_step
    sys.exit(main(["report", sys.argv[1]]))
