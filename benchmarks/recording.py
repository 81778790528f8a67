"""Benchmark figures as data: each benchmark appends one run to `benchmarks/results/<name>.json`.

A run holds the figures, the arguments, the machine (CPU, cores, memory, GPU), the package
versions, the date and the commit, so the docs cite the latest run of a file instead of dated
prose. `python benchmarks/recording.py` prints the latest run of every file as markdown.
`OCG_BENCHMARK_RESULTS` moves the folder (the tests write to a temporary one).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def results_dir() -> Path:
    return Path(os.environ.get("OCG_BENCHMARK_RESULTS") or ROOT / "benchmarks" / "results")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """Where a run ran: enough to tell two machines (and a loaded one: the load average) apart."""
    info = {
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        info["memory_gb"] = round(pages * size / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        info["memory_gb"] = None
    for package in ("torch", "transformers", "spacy"):
        module = sys.modules.get(package)
        if module is not None:
            info[package] = getattr(module, "__version__", None)
    torch = sys.modules.get("torch")
    info["gpu"] = (
        torch.cuda.get_device_name(0) if torch is not None and torch.cuda.is_available() else None
    )
    return info


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() + ("+dirty" if dirty else "")) if out.returncode == 0 else None


def provenance() -> dict:
    """Date, commit and machine of a run, for a benchmark whose results file has a shape of its own."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": machine(),
    }


def record(name: str, figures: dict, args: dict | None = None) -> Path:
    """Append one run of benchmark `name` to its results file; returns the file."""
    path = results_dir() / f"{name}.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(
        {
            "benchmark": name,
            **provenance(),
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "args": args or {},
            "figures": figures,
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(runs, indent=1, default=str) + "\n")
    os.replace(tmp, path)  # a killed benchmark never leaves half a file
    print(f"figures appended to {path}")
    return path


def latest_table(folder: Path | None = None) -> str:
    """The latest run of every results file, one markdown row each."""
    rows = ["| benchmark | date | commit | machine | figures |", "|---|---|---|---|---|"]
    for path in sorted((folder or results_dir()).glob("*.json")):
        runs = json.loads(path.read_text())
        if not runs:
            continue
        run = runs[-1]
        m = run.get("machine", {})
        where = f"{m.get('gpu') or m.get('cpu')}, {m.get('cores')} cores"
        figures = "; ".join(
            f"{k}: {v}"
            for k, v in run.get("figures", {}).items()
            if not isinstance(v, (dict, list))
        )
        rows.append(
            f"| `{path.name}` | {run.get('date', '')[:10]} | {str(run.get('commit'))[:9]} | {where} | {figures} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(latest_table())
