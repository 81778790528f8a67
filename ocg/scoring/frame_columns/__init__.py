"""The columns of the three score frames (answers, groups, summary): the one source of truth.

`ocg/scoring/dictionary.py` checks every table it reads against these rows, and docs/DATA.md's
three frame tables are generated from them (`python -m ocg.scoring.frame_columns` rewrites them;
tests/scoring/test_data_dictionary.py fails while the file is stale). Nothing reads the docs at
run time, so an installed wheel checks its tables as a checkout does.

`when`: `always`, a scoring family's name, `samples`, `perplexity or pbleurt missing`, `mixed`.
`kind`: the type and unit the check enforces ("bool", "int", "str", "fraction 0-1", "% 0-100",
"list of ...", "as the metric", ...). Names may hold `<rule>` (each matching rule), `<flag>`
(each answer flag) or `<metric>` (each summary metric; `<metric>_sample_sd` is not checked).
"""

from __future__ import annotations

import re

from .answer_columns import ANSWERS
from .column import Column
from .group_columns import GROUPS
from .summary_columns import SUMMARY

__all__ = ["ANSWERS", "GROUPS", "HEADER", "SUMMARY", "TABLES", "Column", "current_text", "markdown"]

TABLES = {"answers": ANSWERS, "groups": GROUPS, "summary": SUMMARY}
HEADER = "| column | when | type, unit | what |\n|---|---|---|---|\n"


def markdown(table: str) -> str:
    """The table's rows as docs/DATA.md shows them."""
    return HEADER + "".join(
        f"| `{c.name}` | {c.when} | {c.kind} | {c.what} |\n" for c in TABLES[table]
    )


def _table_span(text: str, table: str) -> tuple[int, int]:
    """Where the frame's markdown table lies in DATA.md (its header to its last row)."""
    section = text.index(f"## {table}\n")
    start = text.index(HEADER, section)
    match = re.compile(r"(?:\|[^\n]*\n)+").match(text, start)
    if match is None:  # HEADER is a table row, so the table matches from it
        raise AttributeError(f"## {table}: no table rows after its header")
    return start, match.end()


def current_text(text: str) -> str:
    """DATA.md's text with its three frame tables as generated from TABLES."""
    for table in TABLES:
        start, end = _table_span(text, table)
        text = text[:start] + markdown(table) + text[end:]
    return text
