"""How long the README's main job takes: `make install` then `make demo` in a fresh clone.

    .venv/bin/python benchmarks/demo_timing.py [--clone DIR] [--keep]

Clones this checkout's HEAD into DIR (default: a temporary folder; it must not exist), runs
`make install` and `make demo` there, and times the install, the whole demo and each of its
steps (the `[k/N] name` lines `ocg report` prints, each to the next), the generation notebooks'
among them. The terminal's lines are kept beside the clone (DIR-install.log, DIR-demo.log), each
with the second it arrived, so the clone itself stays as git made it.
Appends the figures to `benchmarks/results/demo.json` (docs/gpus.md shows the latest).
With `--keep` the clone stays (to run `make test` after the demo in the same clone).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from recording import record

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    clone = args.clone or Path(tempfile.mkdtemp(prefix="ocg-demo-")) / "ocg"
    if clone.exists():
        raise SystemExit(f"{clone}: exists; give a folder that does not")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    measured = subprocess.run(  # what the clone holds: this checkout may move on meanwhile
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    logs = clone.parent / clone.name
    install_s, _ = timed(["make", "install"], clone, Path(f"{logs}-install.log"))
    demo_s, lines = timed(["make", "demo"], clone, Path(f"{logs}-demo.log"))
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
    record("demo", figures, {"clone": str(clone)}, commit=measured)
    if not args.keep:
        shutil.rmtree(clone.parent if args.clone is None else clone)


if __name__ == "__main__":
    main()
