"""`ocg verify REPORT_DIR`: a finished report checked against itself, from its own saved files
(docs/METHODS.md, "Verifying a report"). Each invariant a reader relies on is recomputed:

- I1 views agree: each number of index.html's Table 1 (its quality panel too), Table 4 and
  forced-order tables equals tables/*.csv at the two decimals it is printed with (its median,
  median Δ and ‡ too, per base where a table has two), the LaTeX tables' values and Δs do, and results.json holds the CSVs'
  values exactly;
- I2 every exact sign-flip p is attainable: a multiple of 2/2^n over its n units (a sampled one a
  multiple of 1/(m+1));
- I3 Holm applies within its declared family: each p_holm recomputed from the raw p's of its
  (table, model, condition, base, family), and each family the metric's;
- I4 each number re-derived from the report's own pinned scores (`scores/<model>/`, loaded as
  the notebooks loaded them) by the notebooks' own functions (site/verify_derive.py): Tables 1
  and 4 and the forced order (values: means over templates; Δs; pooled medians; median Δs: the
  medians of the paired per-answer differences; their flags), their bootstrap intervals and
  paired tests (bounds, exact or sampled p, Holm's p), redrawn with the seed, draws and unit each
  table's provenance records; a table with no recorded seed, or a report with no pinned scores,
  is listed in `not_rederived` with why, never passed silently;
- I5 no reference entry enters a mean over models or a count of model answers (Tables 2 and 3,
  Figure 4's thresholds, the trust box's counts);
- I6 every null of results.json (and of any comparison.json given) has a reason;
- I7 the folder is whole: every table has its provenance, results.json its schema version.

A comparison.json given (`--comparisons`) must state its aggregation, its page too, and equal
results.json wherever the two hold the same statistic of the same answers
(site/verify_comparisons.py).

What it cannot check: a number the report never saved (a value only a notebook's output shows), a
table I4 does not recompute (Tables 2, 3, 7, the sensitivity views), a table the page does not
mark with an id, and whether the scores or the functions themselves are right (I4 recomputes with
the same functions from the same scores: a wrong computation saved consistently passes)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import SHORT
from ..analysis.permutation import holm
from ..core.errors import OcgError
from ..core.layout import ReportFolder
from ..metrics.registry import holm_family, label
from .verify_checks import RESULTS as _RESULTS
from .verify_checks import Broken
from .verify_checks import Check as _Check
from .verify_checks import clean as _clean
from .verify_checks import missing as _missing
from .verify_checks import read as _read
from .verify_comparisons import check_comparison
from .verify_derive import load, rederive

INVARIANTS = {
    "I1": "views agree",
    "I2": "exact p attainable",
    "I3": "Holm within its family",
    "I4": "each value, median, Δ, interval and p re-derived from the report's scores",
    "I5": "no reference entry in a model count",
    "I6": "every null has a reason",
    "I7": "report whole",
}
VERIFY_ID = "ocg-verify"  # the trust box's verify line: ignored when the page is read
HOLM_TOLERANCE = 1e-12


class NotAReport(OcgError):
    """The folder is not a finished report (exit 2)."""


@dataclass(frozen=True)
class Verdict:
    """What verify found: how many values it compared and what broke."""

    checked: int
    broken: list[Broken] = field(default_factory=list)
    not_rederived: list[str] = field(default_factory=list)  # I4's tables left out, and why

    @property
    def ok(self) -> bool:
        return not self.broken

    def summary(self) -> str:
        left = (
            f"; {len(self.not_rederived)} table(s) not re-derived from scores (verify.json says why)"
            if self.not_rederived
            else ""
        )
        return (
            f"verified: {self.checked:,} values, {len(INVARIANTS)} invariants, "
            f"{len(self.broken)} broken{left}"
        )

    def lines(self) -> list[str]:
        return [b.line() for b in self.broken] if self.broken else [self.summary()]

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "checked": self.checked,
            "invariants": INVARIANTS,
            "summary": self.summary(),
            "broken": [asdict(b) for b in self.broken],
            "not_rederived": list(self.not_rederived),
        }


# ---------------------------------------------------------------- the report's tables (results.json)


@dataclass(frozen=True)
class Block:
    """A view of results.json read from saved tables (site/results_file.py, results_comparisons.py)."""

    key: str | None  # results.json key of the block (None: Table 1's `models` at the top)
    table: str
    delta: str  # the table's Δ column
    base: str
    intervals: str | None
    tests: str
    condition: str
    also: tuple[str, ...] = ()


BLOCKS = (
    Block(
        None,
        "table1",
        "delta_vs_original_commongen",
        "original",
        "table1_bootstrap_ci",
        "table1_paired_test",
        "ordered",
    ),
    Block(
        "table4",
        "table4",
        "delta_vs_zero_shot_ordered",
        "ordered",
        "table4_bootstrap_ci",
        "table4_paired_test",
        "ordered_one_shot",
    ),
    Block(
        "forced_order",
        "forced_order",
        "delta_vs_ordered",
        "ordered",
        None,
        "forced_order_paired_test",
        "ordered_constrained",
        also=("original",),
    ),
)


def _rows(table: pd.DataFrame | None, **match) -> dict[tuple[str, str], dict]:
    if table is None:
        return {}
    for column, value in match.items():
        if column in table:
            table = table[table[column] == value]
    return {
        (r["model"], r["metric"]): {k: _clean(v) for k, v in r.items()}
        for r in table.to_dict("records")
    }


def _json_entries(doc: dict, block: Block) -> dict[str, dict] | None:
    """model -> {metric -> entry} of a block of results.json."""
    if block.key is None:
        return {m: e.get("metrics") or {} for m, e in (doc.get("models") or {}).items()}
    part = doc.get(block.key)
    return None if not isinstance(part, dict) else (part.get("models") or {})


def _check_json(report: ReportFolder, doc: dict, block: Block, c: _Check) -> None:
    """I1: the block's CSVs and results.json hold the same values."""
    table = _read(report, block.table)
    entries = _json_entries(doc, block)
    if table is None or entries is None:
        return
    cis = (
        _rows(_read(report, block.intervals), condition=block.condition) if block.intervals else {}
    )
    tests = {
        base: _rows(_read(report, block.tests), condition=block.condition, base=base)
        for base in (block.base, *block.also)
    }
    where0 = "models" if block.key is None else f"{block.key}.models"
    inv = f"I1.{block.table}.csv≠results.json"
    for r in table.to_dict("records"):
        r = {k: _clean(v) for k, v in r.items()}
        model, name = r["model"], r["metric"]
        where = f"{where0}.{model}" + (".metrics" if block.key is None else "") + f".{name}"
        entry = (entries.get(model) or {}).get(name)
        if entry is None:
            c.checked += 1
            c.fail(inv, where, "a row of the CSV with no entry in results.json")
            continue
        _json_values(r, entry, block, (inv, where), c)
        ci = cis.get((model, name))
        if ci is not None and entry.get("interval") is not None:
            at = (f"I1.{block.intervals}.csv≠results.json", f"{where}.interval")
            _interval(ci, entry["interval"], at, c)
        for base in (block.base, *block.also):
            key = "delta_test" if base == block.base else f"delta_vs_{base}_test"
            test = tests[base].get((model, name))
            if test is not None and isinstance(entry.get(key), dict):
                _json_test(
                    test, entry[key], (f"I1.{block.tests}.csv≠results.json", f"{where}.{key}"), c
                )


def _json_values(r: dict, entry: dict, block: Block, at: tuple[str, str], c: _Check) -> None:
    """A row's value, Δs and medians against its results.json entry."""
    inv, where = at
    c.same(inv, f"{where}.value", r["value"], entry.get("value"))
    c.same(
        inv,
        f"{where}.delta_vs_{block.base}",
        r.get(block.delta),
        entry.get(f"delta_vs_{block.base}"),
    )
    for base in block.also:
        c.same(
            inv,
            f"{where}.delta_vs_{base}",
            r.get(f"delta_vs_{base}"),
            entry.get(f"delta_vs_{base}"),
        )
    if "median" not in r or "median" not in entry:
        return
    c.same(inv, f"{where}.median", r["median"], entry["median"])
    for base in (block.base, *block.also):
        # a table of one base names its columns plainly; of several, per base (skew.with_medians)
        plain = not block.also
        column = "median_delta" if plain else f"median_delta_vs_{base}"
        key = f"median_delta_vs_{base}"
        c.same(inv, f"{where}.{key}", r.get(column), entry.get(key))
        column = "mean_median_disagree" if plain else f"mean_median_disagree_vs_{base}"
        key = "mean_median_disagree" if base == block.base else f"mean_median_disagree_vs_{base}"
        disagree = r.get(column)
        if not _missing(disagree) or entry.get(key) is not None:
            c.same(inv, f"{where}.{key}", disagree, entry.get(key))


def _json_test(test: dict, given: dict, at: tuple[str, str], c: _Check) -> None:
    """A paired test's row against its results.json object (p's null on a small sample)."""
    inv, where = at
    _interval(test, given, at, c)
    small = bool(test.get("small_sample", False))
    for p in ("p_value", "p_holm"):
        c.same(inv, f"{where}.{p}", None if small else test.get(p), given.get(p))
    for k in ("holm_family", "p_method"):
        c.same(inv, f"{where}.{k}", test.get(k), given.get(k))


def _interval(row: dict, given: dict, at: tuple[str, str], c: _Check) -> None:
    inv, where = at
    small = bool(row.get("small_sample", False))
    c.same(inv, f"{where}.low", None if small else row.get("ci_low"), given.get("low"))
    c.same(inv, f"{where}.high", None if small else row.get("ci_high"), given.get("high"))
    c.same(inv, f"{where}.n", row.get("n", row.get("n_sets")), given.get("n"))
    c.same(inv, f"{where}.small_sample", small, given.get("small_sample"))


# ---------------------------------------------------------------- the page (index.html)


class _Tables(HTMLParser):
    """Every <table id=...> of a page as rows of cells ((tag, text, colspan)), and the trust box's
    data attributes; text inside #ocg-verify (the verify line itself) is left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[tuple[str, str, int]]]] = {}
        self.trust: dict[str, str] | None = None
        self._table: str | None = None
        self._row: list | None = None
        self._cell: list | None = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._depth += 1
            if self._depth == 1 and a.get("id"):
                self._table = a["id"]
                self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [tag, "", int(a.get("colspan") or 1)]
        elif tag == "p" and a.get("id") == "trust":
            self.trust = {k[5:]: v or "" for k, v in attrs if k.startswith("data-")}

    def handle_endtag(self, tag):
        if tag == "table":
            self._depth -= 1
            if self._depth == 0:
                self._table = None
        elif tag == "tr" and self._row is not None and self._table:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append((self._cell[0], self._cell[1].strip(), self._cell[2]))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data


def read_page(path: Path) -> _Tables:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_CELL = re.compile(
    rf"^(?P<v>{_NUMBER})(?P<dagger>\s*‡)?(?:\s*†)?"
    rf"(?:\s*\(median\s(?P<median>{_NUMBER})\))?(?:\s*\(median\sΔ\s(?P<mdelta>{_NUMBER})\))?"
)


def _grid(
    rows: list[list[tuple[str, str, int]]],
) -> tuple[list[tuple[str, ...]], dict[str, list[str]]]:
    """A pandas table's column labels (one tuple per column, its header rows) and body rows by key."""
    header = [r for r in rows if r and all(t == "th" for t, _, _ in r)]
    body = [r for r in rows if r and any(t == "td" for t, _, _ in r)]
    levels = []
    for r in header:
        expanded = [text for _, text, span in r for _ in range(span)]
        levels.append(expanded[1:])  # the first cell is the index's
    width = max((len(level) for level in levels), default=0)
    columns = [tuple(level[i] if i < len(level) else "" for level in levels) for i in range(width)]
    return columns, {r[0][1]: [text for _, text, _ in r[1:]] for r in body}


def page_cells(rows: list[list[tuple[str, str, int]]]) -> dict[tuple[str, str, str], str]:
    """Each body cell of a table pandas wrote (`frame`), as its text by (its row's key, its
    column's first label, the last label below that: "" where none). An index's name is a header
    row of its own (pandas), whose cells are empty over the columns: it labels no column."""
    columns, body = _grid(rows)
    out = {}
    for key, cells in body.items():
        for column, text in zip(columns, cells):
            subs = [level for level in column[1:] if level]
            out[(key, column[0], subs[-1] if subs else "")] = text
    return out


def _shown(text: str) -> dict | None:
    if text in ("–", ""):
        return {}
    m = _CELL.match(text)
    return None if m is None else m.groupdict()


@dataclass(frozen=True)
class Delta:
    """A Δ column of a page table: the CSV's Δ and the CSV columns its median-Δ mark is read
    against (skew.with_medians' names: plain for a table of one base, per base for several)."""

    column: str
    median_delta: str = "median_delta"
    disagree: str = "mean_median_disagree"
    dagger_base: str = "dagger_base"

    @classmethod
    def vs(cls, base: str) -> Delta:
        """The Δ vs `base` of a table of several bases (the forced order)."""
        return cls(
            f"delta_vs_{base}",
            f"median_delta_vs_{base}",
            f"mean_median_disagree_vs_{base}",
            f"dagger_{base}",
        )


def page_deltas(block: Block) -> dict[str, Delta]:
    """The sub-labels the page prints over the block's Δ columns -> what each is read against:
    Table 1's "Δ" (sections._labelled), Table 4's and the forced order's as paper_tables.wide
    names them ("Δ vs zero-shot"; "Δ vs ordered" and "Δ vs original")."""
    if block.key is None:
        return {"Δ": Delta(block.delta)}
    if not block.also:
        return {SHORT[block.delta]: Delta(block.delta)}
    return {SHORT[f"delta_vs_{b}"]: Delta.vs(b) for b in (block.base, *block.also)}


def _check_page_table(
    page: _Tables,
    table_id: str,
    long: pd.DataFrame,
    deltas: dict[str, Delta],
    c: _Check,
    *,
    csv: str | None = None,
) -> None:
    """I1: a wide table of the page (columns (label, sub): sub "" or "value" the value, a Δ's sub
    from `deltas`) against its long CSV (`csv`, named as the table id where not given), each
    number at two decimals, each median and median-Δ mark where the CSV puts one. A sub-label
    over a metric of the CSV that `deltas` does not name is broken, never skipped: a column
    verify cannot read would otherwise pass unread."""
    rows = page.tables.get(table_id)
    if rows is None:
        return
    inv = f"I1.{csv or table_id}.csv≠index.html"
    by_label = {
        (r["model"], label(r["metric"])): {k: _clean(v) for k, v in r.items()}
        for r in long.to_dict("records")
    }
    for (model, name, sub), text in page_cells(rows).items():
        sub = "" if sub == "value" else sub
        row = by_label.get((model, name))
        if row is None:
            continue
        at = (inv, f"#{table_id} {model} / {name}{' ' + sub if sub else ''}")
        if sub and sub not in deltas:
            c.checked += 1
            c.fail(*at, f"a column {sub!r} verify does not read (it reads {sorted(deltas)})")
            continue
        shown = _cell(text, row.get("value") if not sub else row.get(deltas[sub].column), at, c)
        if not shown:
            continue
        if not sub:
            _value_marks(shown, row, at, c)
        else:
            _delta_marks(shown, row, deltas[sub], at, c)


def _cell(text: str, value, at: tuple[str, str], c: _Check) -> dict | None:
    """The cell's parts where its number is the CSV's at two decimals (else broken: None)."""
    inv, where = at
    shown = _shown(text)
    c.checked += 1
    if shown is None:
        c.fail(inv, where, f"{text!r} is no number the page prints")
    elif not shown:
        if not _missing(value):
            c.fail(inv, where, f"'–' on the page, {value!r} in the CSV")
    elif _missing(value) or float(shown["v"]) != float(f"{value:.2f}"):
        c.fail(inv, where, f"{shown['v']} (page) vs {value!r} (csv)")
        return None
    return shown


def _value_marks(shown: dict, row: dict, at: tuple[str, str], c: _Check) -> None:
    """A value cell's median and ‡ against the CSV's `median` and `dagger`."""
    _median_shown(shown, row, ("median", "median"), at, c)
    dagger = row.get("dagger")
    if _missing(dagger) or _missing(row.get("median")):
        return
    c.checked += 1
    if bool(shown["dagger"]) != bool(dagger):
        state = "shown" if shown["dagger"] else "absent"
        c.fail(*at, f"‡ {state} on the page, dagger={dagger} in the CSV")


def _delta_marks(shown: dict, row: dict, delta: Delta, at: tuple[str, str], c: _Check) -> None:
    """A Δ cell's median Δ: shown exactly where the CSV says the mean and median disagree, and
    equal to its median Δ; its ‡ exactly where either mean is ‡ too (skew.median_text)."""
    disagree = row.get(delta.disagree)
    if _missing(disagree) or delta.median_delta not in row:
        return
    c.checked += 1
    if bool(shown["mdelta"]) != bool(disagree):
        state = "shown" if shown["mdelta"] else "absent"
        c.fail(*at, f"median Δ {state} on the page, {delta.disagree}={disagree} in the CSV")
        return
    if not shown["mdelta"]:
        return
    _median_shown(shown, row, ("mdelta", delta.median_delta), at, c)
    either = [row.get(k) for k in ("dagger", delta.dagger_base)]
    if any(_missing(x) for x in either):
        return
    c.checked += 1
    if bool(shown["dagger"]) != any(bool(x) for x in either):
        state = "shown" if shown["dagger"] else "absent"
        c.fail(*at, f"‡ {state} beside the median Δ, dagger and {delta.dagger_base} {either}")


def _median_shown(
    shown: dict, row: dict, parts: tuple[str, str], at: tuple[str, str], c: _Check
) -> None:
    part, column = parts
    if shown.get(part) is None or column not in row:
        return
    c.checked += 1
    v = row.get(column)
    if _missing(v) or float(shown[part]) != float(f"{v:.2f}"):
        c.fail(*at, f"{column} {shown[part]} (page) vs {v!r} (csv)")


# ---------------------------------------------------------------- the LaTeX tables

_TEX_CELL = re.compile(rf"^\$(?P<v>{_NUMBER})_\{{(?P<d>{_NUMBER})")
_TEX_MARKS = re.compile(r"\\(?:textbf|underline)\{([^{}]*)\}")


def _check_tex(report: ReportFolder, name: str, long: pd.DataFrame, delta: str, c: _Check) -> None:
    """I1: each `$value_{Δ}$` cell of tables/<name>.tex is the CSV's at two decimals."""
    path = report.table(name, "tex")
    if not path.exists():
        return
    rows = {(r["model"], label(r["metric"])): r for r in long.to_dict("records")}
    header: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.rstrip().endswith("\\\\"):
            continue
        cells = [x.strip() for x in line.rstrip()[:-2].split(" & ")]
        if header is None:
            header = [re.sub(r"\s*\(\$.*\$\)$", "", x) for x in cells]
            continue
        model = cells[0].replace("\\_", "_").replace("\\&", "&")
        for column, cell in zip(header[1:], cells[1:]):
            if (row := rows.get((model, column))) is not None:
                at = (f"I1.{name}.csv≠{name}.tex", f"{name}.tex {model} / {column}")
                _tex_cell(cell, _clean(row["value"]), _clean(row.get(delta)), at, c)


def _tex_cell(cell: str, value, d, at: tuple[str, str], c: _Check) -> None:
    c.checked += 1
    if cell == "--":
        if not _missing(value):
            c.fail(*at, f"'--' in the LaTeX, {value!r} in the CSV")
        return
    m = _TEX_CELL.match(_TEX_MARKS.sub(r"\1", cell))
    if m is None:
        c.fail(*at, f"{cell!r} is no cell the LaTeX table prints")
        return
    if _missing(value) or float(m["v"]) != float(f"{value:.2f}"):
        c.fail(*at, f"{m['v']} (tex) vs {value!r} (csv)")
    if _missing(d) or float(m["d"]) != float(f"{d:+.2f}"):
        c.fail(*at, f"Δ {m['d']} (tex) vs {d!r} (csv)")


# ---------------------------------------------------------------- I2, I3: the paired tests

_EXACT = re.compile(r"^exact: all (\d+) sign vectors")
_SAMPLED = re.compile(r"^sampled: (\d+) of")


def _attainable(p: float, method: str, n) -> str | None:
    """Why `p` cannot come out of `method` over `n` units (None: it can)."""
    if (m := _EXACT.match(method)) is not None:
        total = int(m[1])
        if not _missing(n) and total != 2 ** int(n):
            return f"{total} sign vectors recorded for n = {int(n)} units (2^n = {2 ** int(n)})"
        hits = p * total / 2  # two-sided: a sign vector and its mirror count alike
        if abs(hits - round(hits)) > 1e-9 * total or not 1 <= round(hits) <= total / 2:
            return f"p = {p!r} is no multiple of 2/{total} in [2/{total}, 1]"
    elif (m := _SAMPLED.match(method)) is not None:
        draws = int(m[1]) + 1
        if abs(p * draws - round(p * draws)) > 1e-9 * draws or not 1 <= round(p * draws) <= draws:
            return f"p = {p!r} is no multiple of 1/{draws} in [1/{draws}, 1]"
    return None


def _check_tests(report: ReportFolder, name: str, c: _Check) -> None:
    """I2 and I3 on a table of paired tests."""
    table = _read(report, name)
    if table is None or "p_value" not in table:
        return
    for r in table.to_dict("records"):
        r = {k: _clean(v) for k, v in r.items()}
        where = f"{name}.csv {r['model']} / {r['metric']}" + (
            f" ({r['condition']} - {r['base']})" if "condition" in r else ""
        )
        _p_attainable(r, where, c)
        if "holm_family" in r and not _missing(r.get("holm_family")):
            c.checked += 1
            if r["holm_family"] != holm_family(r["metric"]):
                why = f"family {r['holm_family']!r}, the metric's is {holm_family(r['metric'])!r}"
                c.fail("I3.holm-family", where, why)
    if {"p_holm", "holm_family"} <= set(table):
        keys = [k for k in ("model", "condition", "base", "holm_family") if k in table]
        _holm(table, keys, name, c)


def _p_attainable(r: dict, where: str, c: _Check) -> None:
    if _missing(r.get("p_value")) or not isinstance(r.get("p_method"), str):
        return
    c.checked += 1
    why = _attainable(float(r["p_value"]), r["p_method"], r.get("n", r.get("n_sets")))
    if why is not None:
        c.fail("I2.exact-p-attainable", where, why)


def _holm(table: pd.DataFrame, keys: list[str], name: str, c: _Check) -> None:
    """I3: each p_holm is Holm's adjustment of the raw p's of its group (`keys`, the family last)."""
    for group, rows in table.groupby(keys, dropna=False, sort=False):
        adjusted = holm(rows["p_value"].to_numpy(dtype=float))
        for (_, r), want in zip(rows.iterrows(), adjusted):
            c.checked += 1
            got = float(r["p_holm"]) if not _missing(r["p_holm"]) else math.nan
            if (math.isnan(got) and math.isnan(want)) or abs(got - want) <= HOLM_TOLERANCE:
                continue
            family = dict(zip(keys, group if isinstance(group, tuple) else (group,)))
            c.fail(
                "I3.holm-within-family",
                f"{name} {r.get('model', '')} / {r['metric']}",
                f"p_holm {got!r}, Holm over its family {family} gives {want!r}",
            )


# ---------------------------------------------------------------- I5: reference entries


_NOTHING_SCORED = object()  # no score set pinned: no model count to check


def _scores(report: ReportFolder):
    from ..results.scores import load_scores

    if not report.scores.is_dir() or not any(p.is_dir() for p in report.scores.iterdir()):
        return _NOTHING_SCORED
    try:
        return load_scores(
            report.scores, tables=("summary",), allow_mixed=True, allow_incomplete=True
        )
    except Exception:  # noqa: BLE001 (an unreadable score set: I7 says so, the rest is still checked)
        return None


def _check_references(report: ReportFolder, page: _Tables | None, c: _Check) -> None:
    """I5, from the pinned score sets' reference entries (their run cards)."""
    scores = _scores(report)
    if scores is _NOTHING_SCORED:
        return
    if scores is None:
        c.checked += 1
        c.fail("I7.scores", str(report.scores), "no readable pinned score sets: I5 not checked")
        return
    refs = set(scores.references)
    models = [m for m in scores.signatures if m not in refs]
    for name in ("table2", "table3"):
        _means_over_models(_read(report, name), name, refs, len(models), c)
    for name in ("figure4_data", "composed_by"):
        t = _read(report, name)
        for column in ("k", "threshold", "n_models"):
            if t is None or column not in t or not len(t):
                continue
            if pd.api.types.is_numeric_dtype(t[column]):
                c.checked += 1
                if (most := int(t[column].max())) > len(models):
                    why = f"up to {most} models counted; the report compares {len(models)}"
                    c.fail("I5.no-reference-in-counts", f"{name}.csv {column}", why)
    if page is not None and page.trust is not None:
        _trust_counts(page.trust, scores.summary, refs, c)


def _means_over_models(t, name: str, refs: set, n: int, c: _Check) -> None:
    if t is None:
        return
    if "model" in t:
        c.checked += 1
        if found := sorted(refs & set(t["model"])):
            c.fail("I5.no-reference-in-means", f"{name}.csv", f"rows of reference entries {found}")
    if "n_models" in t and len(t):
        c.checked += 1
        if (most := int(t["n_models"].max())) > n:
            why = f"a mean over {most} models; the report compares {n} ({len(refs)} references)"
            c.fail("I5.no-reference-in-means", f"{name}.csv n_models", why)


def _trust_counts(trust: dict, summary: pd.DataFrame, refs: set, c: _Check) -> None:
    """The trust box's answers and truncated answers: the compared models' only."""
    if not len(summary):
        return
    shown = summary[
        summary["condition"].isin(("ordered", "original")) & ~summary["model"].isin(refs)
    ]
    for key, column in (("answers", "n_answers"), ("truncated", "n_truncated")):
        if key not in trust or column not in shown:
            continue
        want = int(shown[column].sum())
        c.checked += 1
        if str(want) != trust[key]:
            why = f"{trust[key]} on the page; the compared models' {column} in ordered and "
            c.fail(
                "I5.no-reference-in-counts",
                f"index.html #trust data-{key}",
                why + f"original sum to {want}",
            )


# ---------------------------------------------------------------- I6: nulls


def nulls_without_reason(obj, path: str = "", skip: tuple[str, ...] = ()) -> list[str]:
    """Every null whose object gives no `missing_reason` for its key ("not computed" is none; a
    null in a list always),
    walking dicts and lists; keys of `skip` are not entered."""
    out = []
    if isinstance(obj, dict):
        reasons = obj.get("missing_reason") or {}
        for key, value in obj.items():
            given = reasons.get(key) if isinstance(reasons, dict) else None
            if value is None and given in (None, "", "not computed"):
                out.append(f"{path}/{key}")
            elif key not in ("missing_reason", *skip):
                out += nulls_without_reason(value, f"{path}/{key}", skip)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            if value is None:
                out.append(f"{path}/{i}")
            else:
                out += nulls_without_reason(value, f"{path}/{i}", skip)
    return out


def _check_nulls(doc, name: str, c: _Check) -> None:
    c.checked += 1
    for where in nulls_without_reason(doc):
        c.fail("I6.null-without-reason", f"{name}{where}", "null, and no missing_reason for it")


# ---------------------------------------------------------------- the whole


def _comparisons(report: ReportFolder, given: Path | None) -> Iterator[Path]:
    if given is None:
        return iter(())
    given = Path(given)
    return iter([given] if given.is_file() else sorted(given.glob("*/comparison.json")))


def _load_json(path: Path, c: _Check) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        c.checked += 1
        c.fail("I7.readable", str(path), f"unreadable: {exc}")
        return None


def verify(report_dir: str | Path, *, comparisons: Path | None = None) -> Verdict:
    """The report at `report_dir` checked against itself (module docstring); NotAReport where it
    is no finished report (no index.html, results.json or tables/)."""
    from .results_file import SCHEMA_VERSION

    report = ReportFolder(Path(report_dir))
    absent = [p.name for p in (report.index, report.results, report.tables) if not p.exists()]
    if absent:
        raise NotAReport(f"{report.folder}: no finished report here (missing {', '.join(absent)})")
    c = _Check()
    doc = _load_json(report.results, c)
    page = read_page(report.index)
    for csv in sorted(report.tables.glob("*.csv")):  # I7: the folder is whole
        c.checked += 1
        if not report.table_provenance(csv.stem).exists():
            c.fail("I7.provenance", f"tables/{csv.name}", "no provenance.json beside it")
    if doc is not None:
        schema = doc.get("schema_version")
        c.same("I7.schema", "results.json schema_version", schema, SCHEMA_VERSION, ("file", "ocg"))
        for block in BLOCKS:
            _check_json(report, doc, block, c)
        _check_nulls(doc, _RESULTS, c)
    for block in BLOCKS:
        _check_views(report, page, block, c)
        _check_tests(report, block.tests, c)
    _check_references(report, page, c)
    scores = load(report)
    not_rederived = rederive(report, scores, c)
    for path in _comparisons(report, comparisons):
        if (comp := _load_json(path, c)) is not None:
            _check_nulls(comp, str(path), c)
            if isinstance(comp.get("tests"), list):
                _check_comparison_tests(comp["tests"], str(path), c)
            check_comparison(report, doc, scores, (path, comp), c)
    return Verdict(c.checked, c.broken, not_rederived)


def _check_views(report: ReportFolder, page: _Tables, block: Block, c: _Check) -> None:
    """I1: the page's table of the block and its LaTeX against the CSV."""
    long = _read(report, block.table)
    if long is None:
        return
    check_page(page, block, long, c)
    _check_tex(report, block.table, long, block.delta, c)


def check_page(page: _Tables, block: Block, long: pd.DataFrame, c: _Check) -> None:
    """I1: the page's table of the block (and Table 1's quality columns: a table apart), read
    by its <table id> (the CSV's name, '-' for '_')."""
    table_id = block.table.replace("_", "-")
    for shown in (table_id, f"{table_id}-quality"):
        _check_page_table(page, shown, long, page_deltas(block), c, csv=block.table)


def _check_comparison_tests(rows: list, where: str, c: _Check) -> None:
    """I2 and I3 on a comparison.json's tests where their p's are given (a small sample nulls
    them): Holm per condition within each family."""
    frame = pd.DataFrame([r for r in rows if isinstance(r, dict)])
    if frame.empty or "p_value" not in frame:
        return
    for r in frame.to_dict("records"):
        _p_attainable(r, f"{where} {r.get('condition')} / {r.get('metric')}", c)
    if {"p_holm", "holm_family", "condition"} <= set(frame) and frame["p_value"].notna().all():
        _holm(frame, ["condition", "holm_family"], where, c)


def write_verdict(report_dir: str | Path, verdict: Verdict) -> Path:
    """verify.json beside results.json."""
    from ..core.files import write_json

    return write_json(ReportFolder(Path(report_dir)).verify, verdict.to_json())


def verify_report(report_dir: str | Path) -> Verdict:
    """What `ocg report` (and a sweep's analyses) run last, once index.html is written: verify,
    verify.json beside results.json, and the trust box's verify line filled in (passed: how many
    checks; failed: the broken invariants); the broken lines printed."""
    import sys

    from ..core.files import atomic_path
    from .render import fragment

    report = ReportFolder(Path(report_dir))
    verdict = verify(report.folder)
    write_verdict(report.folder, verdict)
    slot = fragment("sections.html", "verify_slot").strip()  # the placeholder the page holds
    page = report.index.read_text(encoding="utf-8")
    if slot in page:
        with atomic_path(report.index) as tmp:
            tmp.write_text(
                page.replace(slot, fragment("sections.html", "verify", verdict)), encoding="utf-8"
            )
    for line in verdict.lines():
        print(line, file=sys.stdout if verdict.ok else sys.stderr)
    return verdict
