"""Each token's word sets under every matching rule (matching.py's docstring and docs/METHODS.md,
"Concept matching"): the words it matches as a noun concept and as a verb concept, from its
spaCy lemma, its text and the lookup table where its part of speech fits the concept's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

_FUNCTION_POS = {"AUX", "ADP", "DET", "PRON", "CCONJ", "SCONJ", "PART", "NUM", "PUNCT", "SYM"}
_DETERMINER_POS = {"DET", "PRON", "ADJ", "NUM"}
_NOUN_POS = {"NOUN", "PROPN"}
_FINITE_VERB_TAGS = {"VB", "VBZ", "VBP", "VBD"}


@dataclass(frozen=True)
class Tokens:
    """Per token (spaces skipped): its text, and the words it matches as a noun concept and as
    a verb concept."""

    text: tuple[str, ...]
    noun: tuple[frozenset[str], ...]
    verb: tuple[frozenset[str], ...]
    pos: tuple[str, ...] = ()  # spaCy's coarse part of speech (PoS-correct coverage)

    def forms(self, pos: str) -> tuple[frozenset[str], ...]:
        return self.verb if pos == "V" else self.noun


def _lookup_fits_verb(low: str, pos: str, tag: str, prev_pos: str, next_pos: str) -> bool:
    """Can this token (lower-cased text, POS, tag) be a form of a verb concept (rule 3)? See the
    module docstring."""
    if pos == "VERB" or tag.startswith("VB"):
        return True
    if pos in ("ADJ", "NOUN", "PROPN") and low.endswith(("ed", "en")):
        return True
    if pos in _NOUN_POS and low.endswith("ing"):
        return next_pos in _NOUN_POS or prev_pos not in _DETERMINER_POS
    return False


def _lookup_fits_noun(low: str, pos: str, tag: str) -> bool:
    """Can this token be a form of a noun concept (rule 3)? A noun that is no gerund or
    participle, or a verb used as one ("rides"); never "parking", "icing", "wooded", "broken"."""
    if pos in _NOUN_POS:
        return not low.endswith(("ing", "ed"))
    return tag in _FINITE_VERB_TAGS


class TokenFacts(NamedTuple):
    """What decides a token's word sets: its lemma and lower-cased text, its POS and tag, and the
    POS of its neighbours ("" at either end)."""

    lemma: str
    low: str
    pos: str
    tag: str
    prev_pos: str
    next_pos: str


def _sets(facts: TokenFacts, table) -> tuple:
    """One token's word sets: (spaCy's lemma as written, lemma lower-cased, + surface, + lookup
    lemma, as a noun concept, as a verb concept). Only `facts` and the table decide them."""
    lemma, low, pos, tag, prev_pos, next_pos = facts
    spacy_lemma = frozenset({lemma})  # as CommonGen's scripts compare it
    lem = frozenset({lemma.lower()})
    sur = lem | {low}
    looked_up = table.get(low) if table is not None else None
    ext = sur | {looked_up.lower()} if looked_up else sur
    n = v = sur
    if looked_up and pos not in _FUNCTION_POS:
        if _lookup_fits_noun(low, pos, tag):
            n = ext
        if _lookup_fits_verb(low, pos, tag, prev_pos, next_pos):
            v = ext
    return spacy_lemma, lem, sur, ext, n, v


def _rules(
    text: tuple[str, ...], per_token: list[tuple], pos: tuple[str, ...] = ()
) -> dict[str, Tokens]:
    spacy_lemma, lemma, surface, anyl, noun, verb = zip(*per_token) if per_token else ((),) * 6
    return {
        "pos_aware_lookup": Tokens(text, noun, verb, pos),
        "commongen_lemma": Tokens(text, spacy_lemma, spacy_lemma, pos),
        "commongen_lemma_lower": Tokens(text, lemma, lemma, pos),
        "lemma_or_surface": Tokens(text, surface, surface, pos),
        "any_lookup": Tokens(text, anyl, anyl, pos),
    }


def token_forms(doc, table) -> dict[str, Tokens]:
    """Each rule's Tokens for one parsed doc (the lookup `table` consulted once per token)."""
    toks = [t for t in doc if not t.is_space]
    pos = [t.pos_ for t in toks] + [""]
    return _rules(
        tuple(t.text for t in toks),
        [
            _sets(
                TokenFacts(t.lemma_, t.lower_, t.pos_, t.tag_, pos[i - 1] if i else "", pos[i + 1]),
                table,
            )
            for i, t in enumerate(toks)
        ],
        tuple(pos[:-1]),
    )


class TokenForms:
    """`token_forms`, fast: the attributes read as one array per doc, and each token's word sets
    remembered by what decides them (most tokens recur: "the", "a", the concepts), so a token
    seen before costs a dictionary lookup. The same output as `token_forms` (tested)."""

    def __init__(self, table):
        from spacy.attrs import IDX, IS_SPACE, LEMMA, LENGTH, LOWER, POS, TAG
        from spacy.parts_of_speech import NAMES

        self.table, self.attrs, self.pos_names = (
            table,
            [LEMMA, LOWER, POS, TAG, IS_SPACE, IDX, LENGTH],
            NAMES,
        )
        self.memo: dict[tuple, tuple] = {}

    MEMO_SIZE = 500_000

    def __call__(self, doc) -> dict[str, Tokens]:
        rows = [r for r in doc.to_array(self.attrs).tolist() if not r[4]]  # spaces skipped
        strings, names, memo, text = doc.vocab.strings, self.pos_names, self.memo, doc.text
        per_token = []
        for i, (lemma, low, pos, tag, _, _, _) in enumerate(rows):
            key = (
                lemma,
                low,
                pos,
                tag,
                rows[i - 1][2] if i else -1,
                rows[i + 1][2] if i + 1 < len(rows) else -1,
            )
            sets = memo.get(key)
            if sets is None:
                if len(memo) >= self.MEMO_SIZE:  # memory stays bounded over millions of answers
                    memo.clear()
                sets = memo[key] = _sets(
                    TokenFacts(
                        strings[lemma],
                        strings[low],
                        names.get(pos, ""),
                        strings[tag],
                        names.get(key[4], ""),
                        names.get(key[5], ""),
                    ),
                    self.table,
                )
            per_token.append(sets)
        return _rules(
            tuple(text[start : start + length] for *_, start, length in rows),
            per_token,
            tuple(names.get(r[2], "") for r in rows),
        )
