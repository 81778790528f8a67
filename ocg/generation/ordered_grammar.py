"""The grammar of a constrained condition (`ordered_constrained`; docs/METHODS.md, "Forcing the
order"): a regular expression admitting one sentence that holds each concept, in one of its
inflected forms, in the asked order, with bounded free text before, between and after.

The inflected forms come from lemminflect's lexicon (`getAllInflections` for the concept's part
of speech), the concept itself always among them; a word the lexicon holds under no entry of that
part of speech (bar and can as nouns, jean, scissor, sunglass, frisbee, the dataset's bobsle) takes
lemminflect's rules for unknown words (`getAllInflectionsOOV`, what its `getInflection` falls back
on: bars, jeans, sunglasses), so it is not confined to its bare dataset form. A concept is a whole word: a space or the
sentence start before it, an optional comma, semicolon or colon, then a space or the final
stop after it. The sentence starts with a capital letter (the first concept's capitalised form,
or a capitalised free word) and ends with "." or "!" after at most FREE_WORDS free words, so the
model can end it right after the last concept. Free words are bounded in number and length so a
forced sentence can finish inside the token budget; one that does not is counted, not hidden
(`finish_reason: length`).
"""

from __future__ import annotations

import hashlib
import re

from ..data.lexicon import inflections

# Bumped whenever the expression built for the same concepts changes (recorded in the run card).
GRAMMAR_VERSION = 2  # 2: words the lexicon lacks take lemminflect's rules for unknown words

FREE_WORDS = 4  # free words at most before the first concept, between two concepts, after the last
FREE_WORD = r"[A-Za-z0-9'-]{1,15}"  # a free word: letters, digits, apostrophe, hyphen; 15 at most
CAPITAL_WORD = r"[A-Z][A-Za-z0-9'-]{0,14}"  # the first free word of the sentence
AFTER_WORD = "[,;:]?"  # what may follow any word before the next space
END = "[.!]"
GRAMMAR_RULE = (
    f"v{GRAMMAR_VERSION}: one sentence; concepts in the asked order, each as one of its "
    f"lemminflect inflections (its rules for unknown words where the lexicon has no entry "
    f"of the part of speech) or itself, a whole word ({AFTER_WORD} after it); at most "
    f"{FREE_WORDS} free words {FREE_WORD} before the first, between two and after the last; "
    f"a capital first letter; ends with {END}"
)


def _alternatives(forms: tuple[str, ...], capital: bool) -> str:
    return "(?:" + "|".join(re.escape(f[0].upper() + f[1:] if capital else f) for f in forms) + ")"


def _free(n: int) -> str:
    return rf"(?: {FREE_WORD}{AFTER_WORD}){{0,{n}}}"


def ordered_regex(concepts: list[str], pos_pattern: str) -> str:
    """The expression for one instance: its concepts in the asked order (pos_pattern: N/V each)."""
    if not concepts or len(pos_pattern) != len(concepts):
        raise ValueError(f"concepts {concepts!r} and pos_pattern {pos_pattern!r} do not pair up")
    forms = [inflections(c, p) for c, p in zip(concepts, pos_pattern)]
    opening = f"{CAPITAL_WORD}{AFTER_WORD}{_free(FREE_WORDS - 1)} {_alternatives(forms[0], False)}"
    text = f"(?:{_alternatives(forms[0], True)}|{opening})"
    for f in forms[1:]:
        text += f"{AFTER_WORD}{_free(FREE_WORDS)} {_alternatives(f, False)}"
    return text + f"{AFTER_WORD}{_free(FREE_WORDS)}{END}"


def grammar_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def instance_grammars(config, rows) -> dict[str, dict[str, str]]:
    """{condition: {instance id: expression}} for the conditions of `rows` ({condition: instances})
    whose `constraint` (params/templates.yaml) asks for one."""
    out = {}
    for cond, df in rows.items():
        if config.condition(cond).constraint == "ordered_regex":
            out[cond] = {
                iid: ordered_regex(list(c), p)
                for iid, c, p in zip(df["instance_id"], df["concepts"], df["pos_pattern"])
            }
    return out
