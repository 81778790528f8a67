"""Why two reports' tables differ: what `ocg compare-reports` prints after the differences.

The tables say what moved; the reports' provenance says why. Per model, how its answers were
made where that differs (results.json: model id, revision, quantisation, dtype, design); the
scoring families whose version, settings or scored answers differ (each score set's
signature.json, pinned in the report), the families one report scored and the other did not, and
the answer flags' version; then the code: the commit each report was built from and, where this
checkout holds both, the commits between them that touched ocg/, params/ or notebooks/ (their
messages say what each changed). A change the signatures do not record (an analysis, a page)
shows only there.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_json
from ..core.layout import ReportFolder
from ..core.paths import PROJECT_ROOT
from ..records import Signature

MAX_COMMITS = 30  # commits listed between the two reports' own; the rest counted
CODE = ("ocg", "params", "notebooks")  # what a report's numbers come from (the code, the shipped
# entries, run files and scoring settings, the notebooks)
MODEL_FIELDS = ("model_id", "revision", "quantization", "dtype", "design", "n_samples")


def _signatures(report: Path) -> dict[str, Signature]:
    """{model: its pinned score set's signature}; a model whose signature cannot be read is left
    out (the tables' comparison has already said what differs)."""
    out = {}
    for path in sorted(ReportFolder(report).scores.glob("*/signature.json")):
        try:
            out[path.parent.name] = Signature.read(path)
        except (OcgInputError, OSError, ValueError):
            continue
    return out


def _shown(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _family_lines(name: str, a: dict | None, b: dict | None) -> list[str]:
    """What differs in one family's key between two signatures."""
    if a is None or b is None:
        return [f"{name}: scored only in {'B' if a is None else 'A'}"]
    key_a, key_b = a.get("key") or {}, b.get("key") or {}
    lines = []
    for field in sorted(set(key_a) | set(key_b), key=lambda f: (f != "version", f)):
        va, vb = key_a.get(field), key_b.get(field)
        if va == vb:
            continue
        if field == "version":
            lines.append(f"{name}: version {va} → {vb} (its code changed what it computes)")
        elif field == "inputs_sha256":
            lines.append(f"{name}: other answers scored (inputs_sha256)")
        else:
            lines.append(f"{name}: setting {field} {_shown(va)} → {_shown(vb)}")
    return lines


def scoring_differences(a: Path, b: Path) -> list[str]:
    """One line per difference of the two reports' score sets, each naming the models it holds for."""
    sa, sb = _signatures(a), _signatures(b)
    lines: dict[str, list[str]] = defaultdict(list)
    for model in sorted(set(sa) - set(sb)):
        lines["model scored only in A"].append(model)
    for model in sorted(set(sb) - set(sa)):
        lines["model scored only in B"].append(model)
    for model in sorted(set(sa) & set(sb)):
        fa, fb = sa[model].families, sb[model].families
        for name in sorted(set(fa) | set(fb)):
            for line in _family_lines(name, fa.get(name), fb.get(name)):
                lines[line].append(model)
        if sa[model].flags_version != sb[model].flags_version:
            lines[
                f"answer flags: version {sa[model].flags_version} → {sb[model].flags_version}"
            ].append(model)
    return [f"{line} [{', '.join(models)}]" for line, models in lines.items()]


def _git_state(report: Path) -> tuple[str | None, bool | None]:
    """The commit results.json says the report was built from (None: unknown or not recorded;
    a hash in either case is the same hash) and whether its checkout had uncommitted changes
    (None: not recorded)."""
    provenance = _results(report).get("provenance")
    git = provenance.get("git") if isinstance(provenance, dict) else None
    git = git if isinstance(git, dict) else {}
    commit, dirty = git.get("commit"), git.get("dirty")
    hashed = isinstance(commit, str) and re.fullmatch("[0-9a-fA-F]{7,40}", commit)
    # a hash only: what reaches git can be no option
    known = commit.lower() if isinstance(commit, str) and hashed else None
    return known, (dirty if isinstance(dirty, bool) else None)


def _commit(report: Path) -> str | None:
    return _git_state(report)[0]


def _dirty_line(c: str, da: bool | None, db: bool | None) -> list[str]:
    """Where the commits are equal, whether the code may still differ: uncommitted changes."""
    if da is False and db is False:
        return []
    if da is None and db is None:
        return [
            f"code: both built at {c}; whether either checkout had uncommitted changes is unknown"
        ]
    sides = [s for s, d in (("A", da), ("B", db)) if d]
    unknown = [s for s, d in (("A", da), ("B", db)) if d is None]
    if not sides:
        return [
            f"code: both built at {c}; whether {unknown[0]}'s checkout had uncommitted changes is unknown"
        ]
    who = "both checkouts" if len(sides) == 2 else f"{sides[0]}'s checkout"
    return [f"code: both built at {c}, but {who} had uncommitted changes: the code may differ"]


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def code_differences(a: Path, b: Path, repo: Path = PROJECT_ROOT) -> list[str]:
    """The two reports' commits and, where the checkout `repo` knows both, the commits between
    them that touched ocg/, params/ or notebooks/ (newest first), as `git log --oneline` prints them."""
    (ca, da), (cb, db) = _git_state(a), _git_state(b)
    if ca == cb:
        return _dirty_line(ca, da, db) if ca else ["code: neither report records its commit"]
    lines = [f"code: A built at {ca or 'an unknown commit'}, B at {cb or 'an unknown commit'}"]
    if not (ca and cb):
        return lines
    log = _git(repo, "log", "--oneline", "--no-decorate", f"{ca}..{cb}", "--", *CODE)
    if log is None:
        return lines + ["  (this checkout does not hold both commits: no list of changes)"]
    commits = log.splitlines()
    if not commits:
        back = _git(repo, "log", "--oneline", "--no-decorate", f"{cb}..{ca}", "--", *CODE)
        if back and back.strip():
            return lines + ["  B is older than A: read `git log` from B to A for the changes"]
        return lines + [f"  no commit between them changed {', '.join(f'{c}/' for c in CODE)}"]
    lines.append(
        f"  {len(commits)} commit(s) from A to B changed {', '.join(f'{c}/' for c in CODE)}:"
    )
    lines += [f"  {c}" for c in commits[:MAX_COMMITS]]
    if len(commits) > MAX_COMMITS:
        lines.append(f"  ... and {len(commits) - MAX_COMMITS} more (git log {ca[:12]}..{cb[:12]})")
    return lines


def _models(report: Path, side: str) -> tuple[dict, list[str]]:
    """The `models` block of results.json as {model: entry}, keeping only entries that are mappings;
    a block of another shape is said in one line, and nothing of it compared."""
    block, doc = _results(report).get("models"), ReportFolder(report).results.name
    if block is None:
        return {}, []
    if not isinstance(block, dict):
        return {}, [
            f"{side}'s {doc}: `models` is not a mapping of entries; how the answers were "
            "made is not compared"
        ]
    kept = {m: e for m, e in block.items() if isinstance(e, dict)}
    odd = sorted(str(m) for m in block if m not in kept)
    if odd:
        return kept, [
            f"{side}'s {doc}: `models` entries {odd} are not mappings; how their answers "
            "were made is not compared"
        ]
    return kept, []


def _results(report: Path) -> dict:
    try:
        doc = read_json(ReportFolder(report).results)
    except (OcgInputError, OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def cpu_shown(cpu: object) -> str:
    """A run card's CPU block in a few words: its name, its widest vector unit, torch's kernel
    level and any cap set on the kernels ('not recorded' for a card from before it was)."""
    if not isinstance(cpu, dict):
        return "not recorded"
    vector = cpu.get("vector_extensions") or []
    widest = next(
        (
            w
            for w, flag in (("AVX-512", "avx512f"), ("AVX2", "avx2"), ("AVX", "avx"))
            if flag in vector
        ),
        "no AVX",
    )
    caps = cpu.get("kernel_caps") or {}
    capped = "".join(f", {k}={v}" for k, v in sorted(caps.items()))
    return f"{cpu.get('name') or 'unknown CPU'}, {widest}, torch kernels {cpu.get('torch_kernels')}{capped}"


def _cpu_key(cpu: object) -> tuple:
    """What of the CPU decides the arithmetic (its name aside): the vector units and the levels."""
    if not isinstance(cpu, dict):
        return (None,)
    caps = cpu.get("kernel_caps") or {}
    return (
        tuple(cpu.get("vector_extensions") or ()),
        cpu.get("torch_kernels"),
        tuple(sorted(caps.items())) if isinstance(caps, dict) else caps,
    )


def generation_differences(a: Path, b: Path) -> list[str]:
    """Per model both reports hold: what results.json records of how its answers were made
    (model id, revision, quantisation, dtype, design, samples, the CPU's vector units and kernel
    level) where the two differ."""
    (ma, la), (mb, lb) = (_models(r, side) for r, side in ((a, "A"), (b, "B")))
    lines = la + lb
    for model in sorted(set(ma) & set(mb)):
        for field in MODEL_FIELDS:
            va, vb = ma[model].get(field), mb[model].get(field)
            if va != vb:
                lines.append(f"{model}: {field} {_shown(va)} → {_shown(vb)}")
        ca, cb = ma[model].get("cpu"), mb[model].get("cpu")
        if _cpu_key(ca) != _cpu_key(cb):
            lines.append(
                f"{model}: generated on another CPU's kernels: {cpu_shown(ca)} → {cpu_shown(cb)} "
                "(floats add in another order: a near-tie between two tokens can flip)"
            )
    return lines


def explain(a: str | Path, b: str | Path) -> list[str]:
    """Why two reports' tables may differ: how the answers were made, how they were scored, and
    the code, one line each."""
    a, b = Path(a), Path(b)
    return generation_differences(a, b) + scoring_differences(a, b) + code_differences(a, b)
