"""The concepts' inflected forms in lemminflect's lexicon: what the forced-order grammar admits
(ocg/generation/ordered_grammar.py) and what the non-word check accepts (ocg/metrics/nonword.py)."""

from __future__ import annotations

import re
from functools import lru_cache

# letters, inner hyphens; no apostrophe: the lexicon's archaic "ski'd" beside "skied" is no form to admit
_FORM = re.compile(r"[a-z]+(?:-[a-z]+)*")


def lexicon_version() -> str:
    from importlib import metadata

    return metadata.version("lemminflect")


@lru_cache(maxsize=4096)
def inflections(word: str, pos: str) -> tuple[str, ...]:
    """The word and its inflections in lemminflect's lexicon for part of speech `pos` (N or V),
    or by its rules for unknown words when the lexicon has no entry for it there; sorted,
    lower-case alphabetic forms only (hyphens inside; an apostrophe form such as "ski'd" is left out)."""
    import lemminflect

    upos = "VERB" if pos == "V" else "NOUN"
    found = lemminflect.getAllInflections(word, upos=upos) or lemminflect.getAllInflectionsOOV(
        word, upos=upos
    )
    forms = {f for fs in found.values() for f in fs if _FORM.fullmatch(f)}
    return tuple(sorted(forms | {word}))
