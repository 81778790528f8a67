"""What the concept matcher reads of an answer (docs/METHODS.md, "Concept matching"): invisible
format characters taken out, and a long run without a space cut at its punctuation.

- Unicode format characters (category Cf: zero-width space and joiners, bidi controls, the soft
  hyphen, a BOM) are invisible to a reader, yet glued to a word they hide it from spaCy
  ("dog\\u200b" is no "dog"). They are removed before matching (a zero-width space, which
  separates words, becomes a space), and the answer is flagged `format_chars`.
- Control characters (category Cc) other than the ordinary white space (tab, newline, carriage
  return...): a NUL or an escape glued to a word hides it from spaCy just as well ("dog\x00" is
  no "dog"), and no reader sees one. Each is read as a space, and the answer is flagged
  `format_chars` too.
- spaCy's tokenizer strips prefixes and suffixes one at a time, searching the rest again each
  time: quadratic on a run of punctuation without a space (measured here: 4,000 `$` in 8 s,
  8,000 in 33 s; one 200 KB answer once took 17 minutes). A run of over LONG_RUN
  characters without a space is cut to its first LONG_RUN characters, each punctuation
  character set apart by spaces (what spaCy would make of them; letters and digits stay
  together), before tagging; the rest of that run is not read (a concept there is not found),
  and the answer is flagged `long_run`. Setting the punctuation apart alone is linear but still
  tags a token per character (100,000 `$`: 40 s).
"""

from __future__ import annotations

import re
import unicodedata

LONG_RUN = 100  # characters without a space: far longer than any English word (a URL that long is cut, and flagged)
_LONG = re.compile(rf"\S{{{LONG_RUN + 1},}}")
_PUNCT = re.compile(r"[^\w\s]")
ZERO_WIDTH_SPACE = "\u200b"


def _control(c: str) -> bool:
    """A control character that is not white space (a NUL, an escape; tab and newline are not)."""
    return (c < " " or "\x7f" <= c <= "\x9f") and not c.isspace()


def has_format_chars(text: str) -> bool:
    """Holds an invisible format character (Unicode category Cf) or a control character that is
    not white space (category Cc: a NUL, an escape)."""
    if any(_control(c) for c in text):
        return True
    return not text.isascii() and any(unicodedata.category(c) == "Cf" for c in text)


def has_long_run(text: str) -> bool:
    return len(text) > LONG_RUN and _LONG.search(text) is not None


def for_matching(text: str) -> str:
    """The text the matcher tags: format characters out (a zero-width space: a space), control
    characters as spaces, and each run over LONG_RUN characters without a space cut to its first
    LONG_RUN, punctuation set apart."""
    if has_format_chars(text):
        text = "".join(
            " " if c == ZERO_WIDTH_SPACE or _control(c) else c
            for c in text
            if c == ZERO_WIDTH_SPACE or _control(c) or unicodedata.category(c) != "Cf"
        )
    if has_long_run(text):
        text = _LONG.sub(lambda m: _PUNCT.sub(r" \g<0> ", m.group()[:LONG_RUN]), text)
    return text
