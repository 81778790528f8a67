"""How long the README's main job takes: `make install` then `make demo` in a fresh clone.

    .venv/bin/python benchmarks/demo_timing.py [--clone DIR] [--keep]
    .venv/bin/python benchmarks/demo_timing.py --smoke [--results DIR]   # a minute or two

Clones this checkout's HEAD into DIR (default: a temporary folder; it must not exist), runs
`make install` and `make demo` there, and times the install, the whole demo and each of its
steps (the `[k/N] name` lines `ocg report` prints, each to the next), the generation notebooks'
among them. The terminal's lines are kept beside the clone (DIR-install.log, DIR-demo.log), each
with the second it arrived, so the clone itself stays as git made it.
Appends the figures to `benchmarks/results/demo.json` (docs/gpus.md shows the latest).
With `--keep` the clone stays (to run `make test` after the demo in the same clone).
`--smoke` (a test of this script) installs nothing: the clone's `make install` finds this venv
installed (VENV= it, its inputs taken as old), and its demo is `ocg report` on the clone's
params/runs/smoke.yaml narrowed by smoke_run() (4 answers of 4 new tokens, coverage, one analysis),
the clone's code first on the path.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from recording import add_smoke_options, record, use_results

ROOT = Path(__file__).resolve().parents[1]

STEP = re.compile(r"^\[(\d+)/(\d+)\] (\S+)")


def timed(
    command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
) -> tuple[float, list[tuple[float, str]]]:
    """Run `command` (in `env`, else this process's environment), keeping each output line with
    the seconds since the start."""
    start, lines = time.perf_counter(), []
    with (
        subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as proc,
        log.open("w") as out,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            for part in line.replace("\r", "\n").splitlines():
                if part.strip():
                    lines.append((time.perf_counter() - start, part))
                    out.write(f"{lines[-1][0]:8.1f} {part}\n")
                    out.flush()
        code = proc.wait()
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited {code}; its lines: {log}")
    return time.perf_counter() - start, lines


def steps(lines: list[tuple[float, str]], total: float) -> dict[str, float]:
    """Seconds of each `[k/N] name` step, to the next step or the end."""
    marks = [(t, m.group(3)) for t, text in lines if (m := STEP.match(text.strip()))]
    ends = [t for t, _ in marks[1:]] + [total]
    return {name: round(end - t, 1) for (t, name), end in zip(marks, ends)}


def smoke_run(root: Path, folder: Path) -> Path:
    """`root`'s params/runs/smoke.yaml narrowed to a minute or two on a CPU, written to `folder`:
    its 4 answers of 4 new tokens (a models file of its models, max_new_tokens 4), scored for
    coverage alone, one analysis (03_main_results: a report needs its tables). Its path."""
    run = yaml.safe_load((root / "params" / "runs" / "smoke.yaml").read_text())
    models = yaml.safe_load((root / "params" / "models.yaml").read_text())["models"]
    folder.mkdir(parents=True, exist_ok=True)
    models_file = folder / "smoke-models.yaml"
    models_file.write_text(
        yaml.safe_dump(
            {"models": {m: {**models[m], "max_new_tokens": 4} for m in run["models"]}},
            sort_keys=False,
        )
    )
    run.update(models_file=str(models_file), metrics=["coverage"], analysis=["03_main_results"])
    path = folder / "smoke.yaml"
    path.write_text(yaml.safe_dump(run, sort_keys=False))
    return path


def smoke_commands(clone: Path) -> tuple[list[str], list[str], dict[str, str]]:
    """The smoke run's install and demo commands and their environment: this venv, found
    installed by the clone's Makefile (its stamp there; the inputs taken as old, so nothing is
    installed), and the clone's code first on the path."""
    venv = Path(sys.prefix)
    if not (venv / ".ocg-installed").is_file():
        raise SystemExit(
            f"--smoke reuses this venv as `make install` left it: no {venv}/.ocg-installed"
        )
    install = ["make", f"VENV={venv}", "-o", "requirements.lock", "-o", "pyproject.toml", "install"]
    demo = [str(venv / "bin" / "ocg"), "report", str(smoke_run(clone, clone.parent / "smoke-run"))]
    env = dict(os.environ, PYTHONPATH=str(clone))
    env.setdefault("OCG_MODEL_CACHE", str(ROOT / "outputs" / "models"))
    return install, demo, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    add_smoke_options(parser, "no install (this venv), the demo a narrowed params/runs/smoke.yaml")
    args = parser.parse_args()
    use_results(args)
    clone = args.clone or Path(tempfile.mkdtemp(prefix="ocg-demo-")) / "ocg"
    if clone.exists():
        raise SystemExit(f"{clone}: exists; give a folder that does not")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    measured = subprocess.run(  # what the clone holds: this checkout may move on meanwhile
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    logs = clone.parent / clone.name
    install, demo, env = (
        smoke_commands(clone) if args.smoke else (["make", "install"], ["make", "demo"], None)
    )
    install_s, _ = timed(install, clone, Path(f"{logs}-install.log"), env=env)
    demo_s, lines = timed(demo, clone, Path(f"{logs}-demo.log"), env=env)
    by_step = steps(lines, demo_s)
    progress = [text for _, text in lines if " answers" in text and ":" in text]
    figures = {
        "install_s": round(install_s),
        "total_s": round(demo_s),
        "generate_notebooks_s": [s for n, s in by_step.items() if n.startswith("01_generate")],
        "scoring_s": by_step.get("02_score"),
        "analyses_s": round(
            sum(s for n, s in by_step.items() if not n.startswith(("00", "01", "02"))), 1
        ),
        "steps_s": by_step,
        "terminal_lines": len(lines),
        "generation_progress_lines": len(progress),
    }
    print(figures)
    record(
        "demo",
        figures,
        {"clone": str(clone), **({"smoke": True} if args.smoke else {})},
        commit=measured,
    )
    if not args.keep:
        shutil.rmtree(clone.parent if args.clone is None else clone)


if __name__ == "__main__":
    main()
