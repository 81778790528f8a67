"""The case browser's quality columns: what makes an answer a good sentence, shown beside its order
verdict. PoS-correct coverage (every concept there with the asked part of speech; in the asked
order), its non-words, SLOR and perplexity, each from the scoring family that computes it
(docs/DATA.md, the answers frame). A family the run did not score leaves its columns out of the
chunk; one scored as missing (no perplexity model, no judge named) too: its columns hold only NaN.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..scoring.frame_columns import ANSWERS

QUALITY_COLUMNS = [
    "pos_all_present",
    "pos_in_order",
    "has_nonword",
    "nonwords",
    "slor",
    "perplexity",
]
_FAMILY = {c.name: c.when for c in ANSWERS}


def quality_of(answers) -> list[str]:
    """The quality columns these answers hold a value in (in a frame of several models, another
    model's column holds none here)."""
    return [c for c in QUALITY_COLUMNS if c in answers and answers[c].notna().any()]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell(column: str, value):
    """One quality value as JSON: bool, list of str, a float rounded to 4 places, or None (not
    scored for this answer: an answer under two tokens has no perplexity)."""
    if column == "nonwords":
        return None if _missing(value) else [str(w) for w in value]
    if _missing(value):
        return None
    if column in ("slor", "perplexity"):
        return round(float(value), 4)
    return bool(value)


def quality_values(row: dict, columns: list[str]) -> list:
    """The row's quality values, in `columns` order."""
    return [_cell(c, row.get(c)) for c in columns]


def missing_columns(signature: Path) -> set[str]:
    """The answers columns of every family the score set's signature marks missing (the judge
    with no judge named, perplexity and SLOR with no perplexity model): they hold only NaN."""
    from ..records import Signature

    if not signature.exists():
        return set()
    sig = Signature.read(signature)
    gone = {family for family in sig.families if sig.status(family) == "missing"}
    return {name for name, family in _FAMILY.items() if family in gone}
