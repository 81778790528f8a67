"""Concept matching rules and the order check, on tagged tokens (docs/METHODS.md, "Concept matching").

A token matches a concept (word, part of speech N or V) by one of these rules:
  1. its spaCy lemma, lower-cased, equals the word (the paper's "lemmatized forms");
  2. the token itself, lower-cased, equals the word;
  3. its lemma in spaCy's English lookup table (spacy-lookups-data) equals the word, and the
     token can be the concept's part of speech (`pos_aware_lookup`, the default).
Rules 1 and 2 ignore part of speech (the paper names lemmatised forms only; rule 2 is ocg's).
CommonGen's own scripts compare `token.lemma_` as spaCy writes it, not lower-cased, so a
capitalised proper-noun token ("Jump") keeps its capital and misses: `commongen_lemma`; rule 1
alone, lower-cased, is `commongen_lemma_lower`. Rule 3 repairs lemmatiser errors
("rides" -> "rid", ride_V in 11 of the 192 sets; "Dogs" tagged as a proper noun) but the table
is POS-blind ("could" -> can, "building" -> build, "parking" -> park, "crowded" -> crowd). So
rule 3 never lets a function word (AUX, DET, ADP, PRON, ...) match, and:
- lets a token match a verb concept only when it is tagged as a verb, is a participle (-ed/-en)
  tagged as an adjective or noun ("a motorized scooter", "the closed box"), or is an -ing noun
  used as a modifier or without a determiner of its own ("a sewing machine", "starts
  smoking"), not one heading its own noun phrase ("a painting", "the building"); other
  adjectives ("a drunk man") and nouns ("a dove", "the span") do not;
- lets a token match a noun concept only when it is tagged as a noun and is not an -ing or -ed
  form ("the parking lot", "sweet icing", "a wooded hill", "the crowded street" do not match
  park_N, ice_N, wood_N, crowd_N), or is a finite or bare verb ("he rides" for ride_N).
Measured on hand-labelled real outputs: MATCHING_QUALITY below.

Order: `in_order` holds when some increasing sequence of matches covers the concepts in the
given order (checked left to right, each concept at the first match after the previous one, so a
concept mentioned twice can be matched at its later mention). `in_order_first` is the stricter
reading "first occurrences only", kept for the sensitivity view (ocg/analysis/sensitivity.py).
"""

from __future__ import annotations

import numpy as np

from .token_forms import TokenForms as TokenForms  # re-exported: the matching API
from .token_forms import Tokens
from .token_forms import token_forms as token_forms

MATCHING_RULES = (
    "pos_aware_lookup",
    "commongen_lemma",
    "commongen_lemma_lower",
    "lemma_or_surface",
    "any_lookup",
)
DEFAULT_RULE = "pos_aware_lookup"
ORDER_READINGS = ("in_order", "in_order_first")  # ours (any increasing sequence); first occurrences

# Per-answer verdicts under every rule and both order readings, stored at scoring time so the
# sensitivity view needs no second spaCy pass: `<verdict>@<rule>`.
VARIANT_COLUMNS = tuple(
    f"{v}@{rule}" for rule in MATCHING_RULES for v in ("all_present",) + ORDER_READINGS
)

# Precision and recall of each rule against tests/fixtures/matching_labels.jsonl (hand-labelled
# (sentence, concept) pairs; tests/metrics/test_matching.py recomputes them and fails if these drift):
# on the labelled sample, and weighted back to the population of 12,480 (answer, concept) pairs
# of CommonGen-Eval's five-concept outputs by each stratum's size (tests/fixtures/README.md).
# Recorded in every scoring signature.
MATCHING_STRATA = {  # stratum: (pairs in the population, pairs labelled)
    "disagree": (491, 491),  # every pair where the lemma, surface and lookup rules disagree
    "agree_present": (11623, 150),  # all three say present: a random sample
    "agree_absent": (366, 150),  # all three say absent: a random sample
    "constructed": (0, 14),  # sentences written to test false friends: not in the population
}
MATCHING_QUALITY = {
    "labelled_pairs": 805,
    "population": "12,480 (answer, concept) pairs: CommonGen-Eval outputs for the 208 five-concept sets",
    "strata": {name: {"population": n, "labelled": k} for name, (n, k) in MATCHING_STRATA.items()},
    "pos_aware_lookup": {
        "sample": {"precision": 0.9288, "recall": 0.9966},
        "population_weighted": {"precision": 0.9963, "recall": 0.9996},
    },
    "commongen_lemma": {
        "sample": {"precision": 0.9159, "recall": 0.8132},
        "population_weighted": {"precision": 0.9963, "recall": 0.9909},
    },
    "commongen_lemma_lower": {
        "sample": {"precision": 0.9159, "recall": 0.8132},
        "population_weighted": {"precision": 0.9963, "recall": 0.9909},
    },
    "lemma_or_surface": {
        "sample": {"precision": 0.9162, "recall": 0.8166},
        "population_weighted": {"precision": 0.9963, "recall": 0.9911},
    },
    "any_lookup": {
        "sample": {"precision": 0.8962, "recall": 0.9966},
        "population_weighted": {"precision": 0.995, "recall": 0.9996},
    },
}


def quality_for_signature(rule: str) -> dict:
    """What a scoring signature records about matching quality: every rule's, on the sample and
    population-weighted, with the strata (`rule` is the one used)."""
    return {"rule_used": rule, **MATCHING_QUALITY}


# PoS-correct coverage (docs/METHODS.md, "PoS-correct coverage"): a match counts only where spaCy
# tags the token with the concept's part of speech. Stricter than CommonGen-Eval's "pos" rule, which
# tests the tag letter as a substring of spaCy's POS name (so N admits PRON, NUM, CCONJ; V admits ADV).
POS_FITS = {"N": frozenset({"NOUN", "PROPN"}), "V": frozenset({"VERB"})}
POS_COLUMNS = ("pos_all_present", "pos_in_order")
# per concept: the tokens that match it, and how many of them the tagger gives its part of speech
# (a concept never tagged so scores 0 by construction: the caveat under Table 1)
POS_COUNT_COLUMNS = ("pos_matched", "pos_tagged")


def pos_verdicts(tokens: Tokens, hits: list[list[int]], pos_pattern: str) -> dict:
    """pos_all_present, pos_in_order: the order check on the matches tagged with their concept's
    PoS; pos_matched, pos_tagged: per concept, its matches and those tagged with its PoS."""
    kept = [
        [i for i in h if tokens.pos[i] in POS_FITS.get(p, ())] for h, p in zip(hits, pos_pattern)
    ]
    v = _verdicts_of_hits(kept)
    return {
        "pos_all_present": v["all_present"],
        "pos_in_order": v["in_order"],
        "pos_matched": [len(h) for h in hits],
        "pos_tagged": [len(k) for k in kept],
    }


def matches(tokens: Tokens, word: str, pos: str) -> list[int]:
    """Positions of the tokens that match one concept."""
    return [i for i, f in enumerate(tokens.forms(pos)) if word in f]


def _order(hits: list[list[int]]) -> tuple[bool, list[int]]:
    """(in order?, the position the check used for each concept): the first match after the
    previous concept's while the sequence holds, the first match (or -1) after it breaks."""
    pos, used, ordered = -1, [], True
    for h in hits:
        nxt = next((i for i in h if i > pos), -1) if ordered else -1
        if nxt < 0:
            ordered = False
            used.append(h[0] if h else -1)
        else:
            used.append(nxt)
            pos = nxt
    return ordered, used


def _verdicts_of_hits(hits: list[list[int]]) -> dict:
    first = [h[0] if h else -1 for h in hits]
    present = all(p >= 0 for p in first)
    ordered, used = _order(hits)
    return {
        "all_present": present,
        "in_order": ordered and present,
        "in_order_first": present and all(a < b for a, b in zip(first, first[1:])),
        "first": first,
        "used": used,
        "present": [p >= 0 for p in first],
    }


def verdicts(tokens: Tokens, concepts: list[str], pos_pattern: str | None = None) -> dict:
    """all_present, in_order (ours), in_order_first (first occurrences strictly increasing)."""
    pos_pattern = pos_pattern or "N" * len(concepts)
    return _verdicts_of_hits([matches(tokens, c, p) for c, p in zip(concepts, pos_pattern)])


def _as_match(tokens: Tokens, v: dict, n_concepts: int) -> dict:
    return {
        "all_present": v["all_present"],
        "in_order": v["in_order"],
        "coverage_frac": float(np.mean(v["present"])) if n_concepts else 0.0,
        "match_positions": v["first"],
        "order_positions": v["used"],
        "tokens": list(tokens.text),
    }


def match(tokens: Tokens, concepts: list[str], pos_pattern: str | None = None) -> dict:
    """All present, in order, fraction present, where each concept matched first, and the
    positions the order verdict used (what the case browser highlights).

    `pos_pattern` gives each concept's part of speech (N or V), as the instances carry it;
    without it every concept is treated as a noun.
    """
    return _as_match(tokens, verdicts(tokens, concepts, pos_pattern), len(concepts))


def match_all_rules(
    forms: dict[str, Tokens], rule: str, concepts: list[str], pos_pattern: str | None = None
) -> dict:
    """`match` under `rule`, plus every rule's verdicts under both order readings (VARIANT_COLUMNS).
    Rules that find the same matches (most answers) share one verdict."""
    pos_pattern = pos_pattern or "N" * len(concepts)
    out, seen = {}, {}  # type: ignore[var-annotated]  # dict[tuple, dict]; hashed file: no annotation
    for other, tokens in forms.items():
        hits = [matches(tokens, c, p) for c, p in zip(concepts, pos_pattern)]
        key = tuple(map(tuple, hits))
        v = seen.get(key) or seen.setdefault(key, _verdicts_of_hits(hits))
        if other == rule:
            out.update(_as_match(tokens, v, len(concepts)))
            out.update(pos_verdicts(tokens, hits, pos_pattern))
        for name in ("all_present",) + ORDER_READINGS:
            out[f"{name}@{other}"] = v[name]
    return out
