"""Benchmark figures as data: each benchmark appends one run to `benchmarks/results/<name>.json`.

A run holds the figures, the arguments, the machine (CPU, cores, memory, GPU), the package
versions, the date and the commit, so the docs cite the latest run of a file instead of dated
prose. `python benchmarks/recording.py` prints the latest run of every file as markdown;
`--update-docs` rewrites the docs' generated blocks (`<!-- benchmark:<name> -->` ...
`<!-- /benchmark -->`) with the latest run of `<name>.json`.
`OCG_BENCHMARK_RESULTS` moves the folder (the tests write to a temporary one).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = ROOT / "benchmarks" / "results"


def results_dir() -> Path:
    return Path(os.environ.get("OCG_BENCHMARK_RESULTS") or DEFAULT_RESULTS)


def _cpuinfo(field: str) -> str | None:
    """The first `field` line of /proc/cpuinfo (Linux), or None."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def _vector_features() -> list[str]:
    """The CPU's vector extensions that decide CPU inference speed: two "AMD EPYC" machines of this
    project differ here (AVX2 only, bf16 emulated; AVX-512 with bf16), and their demo timings with it."""
    flags = set((_cpuinfo("flags") or "").split())
    return [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]


def machine() -> dict:
    """Where a run ran: enough to tell two machines (and a loaded one: the load average) apart."""
    info = {
        "cpu": _cpu(),
        "vector_features": _vector_features(),
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


def record(name: str, figures: dict, args: dict | None = None, commit: str | None = None) -> Path:
    """Append one run of benchmark `name` to its results file; returns the file. `commit`: the
    commit measured, where it is not this checkout's at the end of the run (a clone made at the start)."""
    path = results_dir() / f"{name}.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(
        {
            "benchmark": name,
            **provenance(),
            **({"commit": commit} if commit else {}),
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


def add_smoke_options(parser: argparse.ArgumentParser, what: str, results: bool = True) -> None:
    """`--smoke` (a tiny real run of the script, `what` it does then) and, for a script whose
    figures go through record(), `--results DIR` (the folder they are appended to)."""
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny real run, seconds (a test of this script): {what}; what it writes goes to "
        "a temporary folder (or the one given), never to benchmarks/results/",
    )
    if results:
        parser.add_argument(
            "--results",
            default=None,
            metavar="DIR",
            help="append the figures to DIR/<name>.json (default: OCG_BENCHMARK_RESULTS, "
            "else benchmarks/results/; with --smoke a new temporary folder)",
        )


def smoke_folder() -> Path:
    """A new temporary folder for a smoke run's files (printed, so the run can be looked at)."""
    folder = Path(tempfile.mkdtemp(prefix="ocg-benchmark-smoke-"))
    print(f"smoke run: writing to {folder}", flush=True)
    return folder


def refuse_shipped(path: Path, smoke: bool) -> Path:
    """`path`, unless a smoke run would write it in benchmarks/results/ (its figures are not
    figures): then the run stops before any work."""
    if smoke and path.resolve().is_relative_to(DEFAULT_RESULTS.resolve()):
        raise SystemExit(f"--smoke writes nothing to benchmarks/results/; got {path}")
    return path


def use_results(args: argparse.Namespace) -> Path:
    """Point record() at `--results` where given; a smoke run without it (and without
    OCG_BENCHMARK_RESULTS) at a new temporary folder. Returns the folder record() appends to."""
    if getattr(args, "results", None):
        os.environ["OCG_BENCHMARK_RESULTS"] = str(Path(args.results).resolve())
    elif args.smoke and not os.environ.get("OCG_BENCHMARK_RESULTS"):
        os.environ["OCG_BENCHMARK_RESULTS"] = str(smoke_folder())
    return refuse_shipped(results_dir(), args.smoke)


def smoke_out(args: argparse.Namespace, default: Path, name: str) -> Path:
    """The file (or folder) a script writes itself, `args.out`: on a smoke run left at `default`,
    `name` in a new temporary folder instead; a smoke run's is never in benchmarks/results/."""
    out = Path(args.out)
    if args.smoke and out == default:
        out = smoke_folder() / name
    return refuse_shipped(out, args.smoke)


class ResultsError(ValueError):
    """A results file that cannot be read as runs, or a docs block whose file is missing: one
    line naming the file (`python benchmarks/recording.py` prints it and exits 1)."""


def runs_of(path: Path) -> list[dict]:
    """A results file's runs, oldest first (a file of a shape of its own holds one run: a dict);
    a file that is missing, truncated or of another shape is a ResultsError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such results file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:  # a benchmark killed mid-write by hand, an edit
        raise ResultsError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    runs = data if isinstance(data, list) else [data]
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not isinstance(run.get("figures", {}), dict):
            raise ResultsError(
                f"{path}: run {i} is {type(run).__name__}; expected a mapping (with a mapping "
                "of figures)"
            )
    return runs


def cell(value: object) -> str:
    """A value as one markdown table cell: `|` escaped, newlines as spaces, and never an HTML
    comment's marks (a figure holding `<!-- /benchmark -->` would end its block early)."""
    text = " ".join(str(value).splitlines())
    return text.replace("|", "\\|").replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def _where(run: dict) -> str:
    m = run.get("machine")
    if not m:
        return "machine not recorded"
    if isinstance(m, str):  # a run transcribed from prose says its machine in words
        return m
    load = f", load {m['load_1min']}" if m.get("load_1min") is not None and not m.get("gpu") else ""
    vector = m.get("vector_features")
    isa = f" ({'/'.join(vector)})" if vector and not m.get("gpu") else ""
    return f"{m.get('gpu') or m.get('cpu')}{isa}, {m.get('cores')} cores{load}"


def latest_table(folder: Path | None = None) -> str:
    """The latest run of every results file, one markdown row each."""
    rows = ["| benchmark | date | commit | machine | figures |", "|---|---|---|---|---|"]
    for path in sorted((folder or results_dir()).glob("*.json")):
        runs = runs_of(path)
        if not runs:
            continue
        run = runs[-1]
        figures = "; ".join(f"{k}: {v}" for k, v in flat(run.get("figures", run)).items())
        rows.append(
            f"| `{cell(path.name)}` | {cell(str(run.get('date', ''))[:10])} "
            f"| {cell(str(run.get('commit'))[:9])} | {cell(_where(run))} | {cell(figures)} |"
        )
    return "\n".join(rows)


PROVENANCE_KEYS = {"benchmark", "date", "commit", "machine", "command", "args", "source"}


def flat(figures: dict, prefix: str = "") -> dict:
    """Scalar figures under dotted names (`per_batch.answers`); a list of rows gives `rows[0].x`."""
    out = {}
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if not prefix and key in PROVENANCE_KEYS:
            continue
        if isinstance(value, dict):
            out.update(flat(value, name + "."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, row in enumerate(value):
                out.update(flat(row, f"{name}[{i}]."))
        else:
            out[name] = ", ".join(map(str, value)) if isinstance(value, list) else value
    return out


def _field(run: dict, dotted: str):
    value: Any = run
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def figures_block(name: str, folder: Path | None = None, where: dict | None = None) -> str:
    """The latest run of `benchmarks/results/<name>.json` as markdown: where and when it ran, then
    one row per figure. What the docs show between `<!-- benchmark:<name> -->` and
    `<!-- /benchmark -->`; `<!-- benchmark:<name> args.device=cuda -->` picks the latest run whose
    field (a dotted path into the run) has that value."""
    runs = [
        r
        for r in runs_of((folder or results_dir()) / f"{name}.json")
        if all(str(_field(r, k)) == v for k, v in (where or {}).items())
    ]
    if not runs:  # a file of no runs yet (`[]`) says so; a missing file is refused (runs_of)
        return f"_No run of `benchmarks/results/{name}.json` yet._"
    run = runs[-1]
    figures = run.get("figures", run)
    head = (
        f"_Latest of {len(runs)} {'matching ' * bool(where)}run{'s' * (len(runs) > 1)} in "
        f"`benchmarks/results/{name}.json`: "
        f"{str(run['date'])[:10] if run.get('date') else 'date not recorded'}, "
        f"commit {str(run['commit'])[:9] if run.get('commit') else 'not recorded'}, {_where(run)}"
        + (f", `{run['command']}`" if run.get("command") else "")
        + (f"; {run['source']}" if run.get("source") else "")
        + "._"
    )
    head = cell(head)
    rows = [f"| `{cell(k)}` | {cell(v)} |" for k, v in flat(figures).items()]
    return "\n".join([head, "", "| figure | value |", "|---|---|", *rows])


BLOCK = re.compile(
    r"(<!-- benchmark:([\w-]+)((?: [\w.]+=\S+)*) -->\n).*?(<!-- /benchmark -->)", re.S
)
DOCS = ("README.md", "docs/*.md")


def doc_files() -> list[Path]:
    return sorted(p for pattern in DOCS for p in ROOT.glob(pattern))


def rendered(text: str, folder: Path | None = None) -> str:
    """`text` with every benchmark block holding its results file's latest run."""

    def block(m: re.Match) -> str:
        where = dict(pair.split("=", 1) for pair in m[3].split())
        return f"{m[1]}{figures_block(m[2], folder, where)}\n{m[4]}"

    return BLOCK.sub(block, text)


def stale_docs(files: list[Path] | None = None, folder: Path | None = None) -> list[Path]:
    """The docs whose benchmark blocks do not show the latest runs."""
    return [p for p in files or doc_files() if rendered(p.read_text(), folder) != p.read_text()]


def update_docs(files: list[Path] | None = None, folder: Path | None = None) -> list[Path]:
    """Rewrite the benchmark blocks of the docs that are stale; returns those files."""
    stale = stale_docs(files, folder)
    for path in stale:
        path.write_text(rendered(path.read_text(), folder))
    return stale


def main(argv: list[str]) -> int:
    try:
        if argv == ["--update-docs"]:
            for path in update_docs():
                print(f"updated {path.relative_to(ROOT)}")
        elif argv:
            print("usage: python benchmarks/recording.py [--update-docs]", file=sys.stderr)
            return 2
        else:
            print(latest_table())
    except ResultsError as exc:
        print(f"recording.py: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
