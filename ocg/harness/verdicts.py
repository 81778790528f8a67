"""ocg's own checks on a harness's answers, and the pooled rates ocg's report prints, so a number
a harness shows is the number `ocg report` would show for the same answers.

Per answer: the answer extracted from the raw output as ocg extracts it, then coverage's matching
(`all_present`: every concept, any order; `in_order`: in the order given) and the list-copy flags
(`copies_list`, `bare_list`) computed from coverage's tokens, as scoring computes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import pandas as pd

from ..generation.extraction import extract_answer
from ..metrics import coverage, listcopy
from ..metrics.registry import metric

CHECKS = ("all_present", "in_order", "copies_list", "bare_list")
# The pooled rates, each a ratio of sums of the checks (ocg/metrics/registry.py defines the first
# three; the list copies as ocg/analysis/copies.py counts them: a share of the in-order answers).
RATES = ("coverage_wo_order", "coverage_w_order", "ordered_rate", "copies_list_rate")
COPIES = ("copies_list", "in_order", 100.0)


@lru_cache(maxsize=1)
def _nlp():
    return coverage.load_nlp("auto")


def answer_text(raw: str | None, extraction: str = "plain") -> str:
    """The answer ocg scores in a raw output (an answer that failed extraction: empty)."""
    answer, _ = extract_answer(raw or "", extraction)
    return answer or ""


def verdicts(
    raws: Sequence[str | None],
    concepts: Sequence[Sequence[str]],
    pos_patterns: Sequence[str | None] | None = None,
    *,
    extraction: str = "plain",
) -> pd.DataFrame:
    """One row of CHECKS (booleans) per answer, in the order given."""
    texts = pd.Series([answer_text(r, extraction) for r in raws], dtype=object)
    concept_lists = pd.Series([list(c) for c in concepts], dtype=object)
    patterns = None if pos_patterns is None else pd.Series(list(pos_patterns), dtype=object)
    job = coverage.CoverageJob(texts, concept_lists, _nlp(), pos_patterns=patterns, n_process=1)
    try:
        matched = job.result()
    finally:
        job.close()
    flags = listcopy.list_flags(matched.assign(concepts=list(concept_lists)))
    out = pd.concat([matched[["all_present", "in_order"]], flags], axis=1)
    return out.astype(bool)[list(CHECKS)]


def _definition(name: str) -> tuple[str, str, float]:
    if name == "copies_list_rate":
        return COPIES
    m = metric(name)
    assert m is not None, name
    return m.numerator, m.denominator, m.scale


def pooled_rates(rows: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """RATES over the answers' checks (each a mapping with CHECKS): a ratio of sums, scaled as
    ocg's tables print it (percent); NaN where the denominator is 0."""
    sums = dict.fromkeys(CHECKS, 0.0)
    n = 0
    for row in rows:
        n += 1
        for check in CHECKS:
            sums[check] += float(bool(row[check]))
    stats = {**sums, "n": float(n)}
    rates = {}
    for name in RATES:
        numerator, denominator, scale = _definition(name)
        d = stats[denominator]
        rates[name] = scale * stats[numerator] / d if d else float("nan")
    return rates
