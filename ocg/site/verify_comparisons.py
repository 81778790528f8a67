"""`ocg verify --comparisons`: a comparison.json (`ocg compare`) against the report it drew a side
from, where the two share a value (site/verify.py, I1).

Each comparison states the aggregation it computes on (analysis/versus.py AGGREGATION: each
metric one ratio pooled over the shared answers of a condition), and its page says so; both are
checked present. A side's value is the report's where both are the same statistic of the same
answers: the side is this report's model and the comparison holds every answer it has (shared
instances = the side's instances; else another sample), the report's tables were not restricted to
instances its models share, and the statistic is computed alike: a pooled metric's value (Ordered
Rate: Table 1 pools it over templates too), a perplexity or SLOR median (both pooled over every
scored answer). Where the aggregations differ (a mean over templates against a pooled ratio)
nothing is compared: the stated aggregation says why they may differ."""

from __future__ import annotations

import re
from pathlib import Path

from ..analysis.skew import MEDIAN_METRICS
from ..analysis.versus import AGGREGATION
from ..core.layout import ComparisonFolder, ReportFolder
from ..metrics.registry import metric
from .verify_checks import Check

_COMPARISON = ComparisonFolder(Path(".")).data.name  # comparison.json, as the layout names them
_RESULTS = ReportFolder(Path(".")).results.name

# results.json's block of each condition's numbers (None: Table 1's `models` at the top)
BLOCK_OF = {"ordered": None, "ordered_one_shot": "table4", "ordered_constrained": "forced_order"}
_STATED = re.compile(r"""data-aggregation=["']([^"']*)["']""")


def check_comparison(
    report: ReportFolder, doc: dict | None, scores, at: tuple[Path, dict], c: Check
) -> None:
    """The comparison's stated aggregation, and each value it shares with `doc` (results.json);
    `scores`: the report's scores as its notebooks loaded them (verify_derive.load), or why not."""
    path, comp = at
    _stated(path, comp, c)
    if doc is None or isinstance(scores, str) or scores.instance_differences:
        return  # nothing loaded to say the report's tables hold every instance, or they do not
    shared = (comp.get("shared") or {}).get("instances")
    for side in ("a", "b"):
        s = comp.get(side)
        if not isinstance(s, dict) or not _of(report, s) or s.get("instances") != shared:
            continue
        for test in comp.get("tests") or []:
            if isinstance(test, dict):
                _shared_values(doc, s["model"], side, test, (str(path), c))


def _stated(path: Path, comp: dict, c: Check) -> None:
    """comparison.json names its aggregation, and its page (index.html beside it) the same one."""
    want = AGGREGATION["name"]
    stated = comp.get("aggregation")
    name = stated.get("name") if isinstance(stated, dict) else None
    c.checked += 1
    if name != want:
        c.fail(
            "I1.comparison-aggregation",
            f"{path} aggregation",
            f"{name!r}; expected {want!r} (the aggregation `ocg compare` computes on: rerun it)",
        )
    page = ComparisonFolder(path.parent).index
    if not page.exists():
        return
    shown = _STATED.findall(page.read_text(encoding="utf-8"))
    c.checked += 1
    if shown != [want]:
        c.fail(
            "I1.comparison-aggregation",
            str(page),
            f"the page states aggregation {shown}; its comparison.json computes on {want!r}",
        )


def _of(report: ReportFolder, side: dict) -> bool:
    """The side was drawn from this report: its folder, or (the folder moved) its name."""
    folder = Path(str(side.get("folder", "")))
    if folder.exists():
        return folder.resolve() == report.folder.resolve()
    return side.get("report") == report.folder.name


def _entry(doc: dict, condition, model, name) -> dict | None:
    if condition not in BLOCK_OF:
        return None
    key = BLOCK_OF[condition]
    if key is None:
        found = ((doc.get("models") or {}).get(model) or {}).get("metrics") or {}
    else:
        block = doc.get(key)
        found = ((block.get("models") or {}).get(model) or {}) if isinstance(block, dict) else {}
    entry = found.get(name) if isinstance(found, dict) else None
    return entry if isinstance(entry, dict) else None


def _shared_values(doc: dict, model: str, side: str, test: dict, at: tuple[str, Check]) -> None:
    where, c = at
    name, condition = test.get("metric"), test.get("condition")
    entry = _entry(doc, condition, model, name)
    if entry is None:
        return
    inv = "I1.comparison.json≠results.json"
    names = (_COMPARISON, _RESULTS)
    here = f"{where} {condition} / {name} ({side.upper()}: {model})"
    m = metric(str(name))
    if m is not None and m.pooled and f"value_{side}" in test:
        c.close(inv, f"{here} value_{side}", test[f"value_{side}"], entry.get("value"), names)
    if name in MEDIAN_METRICS and entry.get("median_pooled") is True and f"median_{side}" in test:
        c.close(inv, f"{here} median_{side}", test[f"median_{side}"], entry.get("median"), names)
