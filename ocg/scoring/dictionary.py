"""Score tables checked on read against the frames' columns (ocg/scoring/frame_columns/, from
which docs/DATA.md's tables are generated).

A signature proves that a table is the one written with it, not that it is right: a table
edited by hand and resealed (a fresh signature over the new bytes) would reach Table 1 with a
column missing (NaN), another model's name (silently dropped), an `in_order` of 7 or an answer
twice. Each table read is checked for the columns listed as always there (and those of
the families its signature scored), their types and ranges ("bool", "int", "str", "fraction
0-1", "% 0-100", ...), the model's name and its key's uniqueness: vectorised, list columns not
opened, an error naming the file and column.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..core.errors import OcgInputError, shown
from ..core.frames import GROUP_KEYS, SAMPLE, SUMMARY_KEYS
from ..metrics.coverage import MATCHING_RULES
from ..metrics.degenerate import FLAG_COLUMNS
from .frame_columns import TABLES

KEYS = {
    "answers": ["instance_id", SAMPLE],
    "groups": [*GROUP_KEYS, SAMPLE],
    "summary": SUMMARY_KEYS,
}  # "sample" where the run had samples
ADDED_ON_READ = {"concept_words", "template"}  # load_scores adds them (results.readable)


@lru_cache(maxsize=1)
def columns() -> dict[str, dict[str, tuple[str, str]]]:
    """table -> column -> (when, type and unit), `<rule>` and `<flag>` expanded
    (`<metric>_sample_sd`, "as the metric", is left out)."""
    out = {}
    for table in KEYS:
        rows = {}
        for col in TABLES[table]:
            for rule in MATCHING_RULES if "<rule>" in col.name else [None]:
                for flag in FLAG_COLUMNS if "<flag>" in col.name else [None]:
                    rows[col.name.replace("<rule>", rule or "").replace("<flag>", flag or "")] = (
                        col.when,
                        col.kind,
                    )
        out[table] = {n: v for n, v in rows.items() if "<" not in n}
    return out


def _problem(column: pd.Series, kind: str) -> str | None:
    """Why `column` is not of the type (and range) its row gives, or None."""
    types = pd.api.types
    if kind == "bool":
        return None if types.is_bool_dtype(column) else f"expected bool, got {column.dtype}"
    if kind == "int":
        ok = types.is_integer_dtype(column) and not types.is_bool_dtype(column)
        return None if ok else f"expected int, got {column.dtype}"
    if kind.startswith("list"):
        return None
    if "str" in kind:
        ok = (
            types.is_string_dtype(column)
            or isinstance(column.dtype, pd.CategoricalDtype)
            or types.infer_dtype(column, skipna=True) in ("string", "empty")
        )
        return None if ok else f"expected text, got {types.infer_dtype(column, skipna=True)}"
    if kind == "as the metric":
        return None
    if not types.is_numeric_dtype(column) or types.is_bool_dtype(column):
        return f"expected a number ({kind}), got {column.dtype}"
    bounds = re.search(r"(\d+)-(\d+)$", kind)
    if bounds:
        low, high = float(bounds[1]), float(bounds[2])
        slack = 1e-9 * (high - low)  # a mean of 100s may sum to 100.00000000000004
        outside = column[(column < low - slack) | (column > high + slack)]
        if len(outside):
            return f"{len(outside)} value(s) outside {kind} (e.g. {float(outside.iloc[0]):g})"
    return None


def check_table(
    path: Path, table: str, frame: pd.DataFrame, model: str, families: set[str]
) -> None:
    """An error naming `path` and the column unless `frame` is a `table` of `model` as its columns say."""
    where = str(path)
    if frame.empty:
        raise OcgInputError(
            where, "no rows; a score set holds at least one answer, group and summary row"
        )
    listed = columns()[table]
    needed = [
        c
        for c, (when, _) in listed.items()
        if (when == "always" or when in families) and c not in ADDED_ON_READ
    ]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise OcgInputError(
            where,
            f"column(s) {', '.join(missing)} missing (docs/DATA.md lists them; a set "
            "scored by an older ocg lacks them too): run `ocg score --redo` to recompute it",
        )
    for name, (_, kind) in listed.items():
        problem = _problem(frame[name], kind) if name in frame.columns else None
        if problem:
            raise OcgInputError(f"{where}: column {name}", problem)
    foreign = frame.loc[frame["model"] != model, "model"]
    if len(foreign):
        raise OcgInputError(
            f"{where}: column model",
            f"got {shown(foreign.iloc[0])} in {len(foreign)} row(s); "
            f"expected {model!r}, the score set's folder",
        )
    key = [k for k in KEYS[table] if k in frame.columns]
    twice = frame.duplicated(key, keep=False)
    if twice.any():
        twice = frame.loc[twice, key]
        first = twice.iloc[0]
        raise OcgInputError(
            f"{where}: columns {', '.join(key)}",
            f"{len(twice)} rows share a key (e.g. {shown(tuple(first[k] for k in key))}); "
            "each is expected once",
        )
