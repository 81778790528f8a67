"""Flags for answers that are not one plain sentence, so they are counted, not hidden
(docs/METHODS.md, "Answer flags")."""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

from .listcopy import GLUE_WORDS, LIST_FLAGS
from .textprep import LONG_RUN, has_format_chars, has_long_run

_MARKDOWN = re.compile(r"\*\*|__|^\s*#|^\s*[-*] |`|Answer\s*:", re.MULTILINE)
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]]*\s+[\"'(]*[A-Z0-9]")
OVERLONG_CHARS = 300
LOOP_WORDS, LOOP_TIMES = 3, 3  # a loop: some run of 3 words occurs 3 or more times
# Bump when a flag is added or its definition changes: score sets flagged otherwise are recomputed.
FLAGS_VERSION = 6  # 3: copies_list and bare_list (metrics/listcopy.py); 4: copies_list narrowed to runs that read
# as lists; 5: format_chars, long_run (textprep.py); 6: format_chars counts control characters


def looping(text: str) -> bool:
    """The answer repeats itself ("the person who jumps the person who jumps the person who...")."""
    words = [w.lower() for w in re.findall(r"\w+", text)]
    runs = Counter(zip(*(words[i:] for i in range(LOOP_WORDS))))
    return max(runs.values(), default=0) >= LOOP_TIMES


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
        "non_ascii": not text.isascii()
        and any(c.isalpha() and ord(c) > 127 for c in text),  # often not English
        # not empty, yet no letter at all: zero-width characters, a BOM, emoji, digits, punctuation
        "no_letters": bool(text) and not any(c.isalpha() for c in text),
        # U+FFFD: characters lost before the answer reached us (lone surrogates, see ocg/generation/answer_store/store.py)
        "replaced_chars": "\ufffd" in text,
        "looping": looping(text),
        # what the matcher reads differs from the text (metrics/textprep.py): invisible characters out,
        # a long run without a space cut at its punctuation
        "format_chars": has_format_chars(text),
        "long_run": has_long_run(text),
    }


# `truncated` comes from the generation record, not the text: the model stopped at its budget
# (finish_reason "length", from transformers and OpenAI-style servers alike). The list flags come
# from coverage's tokens and match positions (metrics/listcopy.py), set once coverage is scored.
FLAG_COLUMNS = [*flags("x"), "truncated", *LIST_FLAGS]
FLAG_HELP = {
    "failed": "no answer could be extracted (an unclosed <think>, no <Output>)",
    "empty": "the answer is empty",
    "one_word": "the answer is one word",
    "markdown": "the answer holds markdown (bold, a heading, a list item, 'Answer:')",
    "multi_sentence": "more than one sentence",
    "overlong": f"over {OVERLONG_CHARS} characters",
    "non_ascii": "letters outside ASCII (often not English)",
    "no_letters": "not empty, yet no letter (zero-width characters, a BOM, emoji, digits)",
    "replaced_chars": "characters lost before the answer was stored (U+FFFD)",
    "looping": f"some run of {LOOP_WORDS} words occurs {LOOP_TIMES} or more times",
    "format_chars": "invisible format characters (zero-width, bidi controls, soft hyphen, BOM; removed before "
    "matching) or control characters (a NUL, an escape; read as spaces)",
    "long_run": f"a run of over {LONG_RUN} characters without a space: only its first {LONG_RUN} are matched",
    "truncated": "generation stopped at max_new_tokens (finish_reason: length): possibly cut off",
    "copies_list": "in order, and the concepts stand as one run in the asked order, with nothing but punctuation "
    f"or {', '.join(repr(w) for w in sorted(GLUE_WORDS))} between them (it echoes the prompt's list)",
    "bare_list": "every concept present and nothing else: no word but the concepts, punctuation and "
    f"{', '.join(repr(w) for w in sorted(GLUE_WORDS))}",
}


def flag_answers(answers: pd.Series, finish_reasons: pd.Series | None = None) -> pd.DataFrame:
    """Flags per answer; identical answers are examined once."""
    seen: dict = {}
    rows = [seen[a] if a in seen else seen.setdefault(a, flags(a)) for a in answers]
    out = pd.DataFrame(rows, index=answers.index)
    out["truncated"] = (
        (finish_reasons == "length").to_numpy() if finish_reasons is not None else False
    )
    return out
