"""Flags for answers that are not one plain sentence, so they are counted, not hidden."""

from __future__ import annotations

import re

import pandas as pd

_MARKDOWN = re.compile(r"\*\*|__|^\s*#|^\s*[-*] |`|Answer\s*:", re.MULTILINE)
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]]*\s+[\"'(]*[A-Z0-9]")
OVERLONG_CHARS = 300


def flags(answer) -> dict:
    failed = not isinstance(answer, str)
    text = "" if failed else answer.strip()
    words = re.findall(r"\w+", text)
    return {
        "failed": failed,
        "empty": not failed and not text,
        "one_word": len(words) == 1,
        "markdown": bool(_MARKDOWN.search(text)),
        "multi_sentence": bool(_SENTENCE_BREAK.search(text)),
        "overlong": len(text) > OVERLONG_CHARS,
        "non_ascii": not text.isascii() and any(c.isalpha() and ord(c) > 127 for c in text),  # often not English
        # not empty, yet no letter at all: zero-width characters, a BOM, emoji, digits, punctuation
        "no_letters": bool(text) and not any(c.isalpha() for c in text),
        # U+FFFD: characters lost before the answer reached us (lone surrogates, see store.py)
        "replaced_chars": "\ufffd" in text,
    }


FLAG_COLUMNS = list(flags("x"))


def flag_answers(answers: pd.Series) -> pd.DataFrame:
    """Flags per answer; identical answers are examined once."""
    seen: dict = {}
    rows = [seen[a] if a in seen else seen.setdefault(a, flags(a)) for a in answers]
    return pd.DataFrame(rows, index=answers.index)
