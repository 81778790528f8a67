"""Answers holding a non-word (docs/METHODS.md, "Acceptability"): a word no lexicon knows that is
not a form of one of the answer's concepts ("a fun andenge." in a forced answer). A mean
perplexity or SLOR can hide a few such answers; their share cannot.

A word is a run of letters with inner apostrophes (digits never count). It is a non-word when
wordfreq lists no English frequency for it, lemminflect's lexicon has no lemma for it (as
written or lower-cased), and it is neither a concept word nor one of the concept's inflections in
lemminflect's lexicon (the forms the forcing grammar admits: generation/ordered_grammar.py) or,
for a concept the lexicon lacks, made by lemminflect's rules.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from ..data.lexicon import inflections

LETTERS = regex.compile(r"\p{L}+(?:['’]\p{L}+)*")
LANG = "en"


@lru_cache(maxsize=200_000)
def unknown(word: str) -> bool:
    """No lexicon knows the word: wordfreq's frequency is 0 and lemminflect has no lemma for it."""
    import lemminflect
    import wordfreq

    return (
        wordfreq.word_frequency(word, LANG) == 0
        and not lemminflect.getAllLemmas(word)
        and not lemminflect.getAllLemmas(word.lower())
    )


@lru_cache(maxsize=20_000)
def forms_of(concept: str, pos: str) -> frozenset[str]:
    """The concept, its inflections in lemminflect's lexicon and, for a word the lexicon lacks, those
    its rules make ("andenge" -> "andenges"), lower-case."""
    import lemminflect

    oov = lemminflect.getAllInflectionsOOV(concept, upos="VERB" if pos == "V" else "NOUN")
    return frozenset(
        f.lower() for f in (*inflections(concept, pos), *(f for fs in oov.values() for f in fs))
    )


def concept_forms(concepts, pos_pattern: str | None) -> frozenset[str]:
    """The forms of every concept, as the pattern gives each its part of speech."""
    pattern = pos_pattern or "N" * len(concepts)
    return frozenset().union(*(forms_of(c, p) for c, p in zip(concepts, pattern)))


def nonwords(text: str | None, concepts, pos_pattern: str | None) -> list[str]:
    """The answer's non-words, in the order they occur."""
    if not isinstance(text, str) or not text.strip():
        return []
    forms = concept_forms(list(concepts), pos_pattern)
    return [w for w in LETTERS.findall(text) if unknown(w) and w.lower() not in forms]
