"""PoS-correct coverage beside CommonGen-Eval's "pos" rule (docs/METHODS.md, "PoS-correct coverage").

Ours (matching.pos_verdicts, stored by the coverage family): a concept counts where a token that
matches it by ocg's matching rule is tagged by spaCy with the concept's part of speech (N: NOUN or
PROPN; V: VERB). CommonGen-Eval (allenai/CommonGen-Eval, eval_utils.py `analyze_words`, scored in
show_table.py) counts an answer PoS-correct when the set of `lemma_POS` strings over its tokens
whose spaCy lemma equals a concept word, and whose POS name contains the concept's tag letter
("n" in "noun", "v" in "verb"), has as many entries as there are concepts. `commongen_eval_pos`
is that rule on a parsed doc, so the two can be compared on the same spaCy analysis.
"""

from __future__ import annotations

# Agreement of pos_all_present with commongen_eval_pos on CommonGen-Eval's 2,496 five-concept
# outputs (ocg/data/commongen_eval_outputs_5concept.jsonl), both on ocg's spaCy pipeline
# (params/scoring.yaml); tests/metrics/test_pos_coverage.py recomputes it and fails if it drifts.
# All 60 disagreements are answers ours accepts and theirs does not: spaCy's lemma "rid" for "rides"
# (which ocg's lookup repairs), or a concept found under two POS names (two set entries).
AGREEMENT = {
    "outputs": 2496,
    "agree": 2436,
    "both_true": 1802,
    "ours_only": 60,
    "theirs_only": 0,
    "both_false": 634,
}


def commongen_eval_pos(doc, concepts: list[str]) -> bool:
    """CommonGen-Eval's per-answer PoS verdict for concepts written `word_N` / `word_V`."""
    tags = dict(c.split("_") for c in concepts)
    found = {
        f"{t.lemma_}_{t.pos_}"
        for t in doc
        if t.lemma_ in tags and tags[t.lemma_].lower() in t.pos_.lower()
    }
    return len(found) == len(concepts)


def agreement(ours: list[bool], theirs: list[bool]) -> dict:
    """How often the two verdicts agree, and how they split."""
    pairs = list(zip(ours, theirs))
    return {
        "outputs": len(pairs),
        "agree": sum(a == b for a, b in pairs),
        "both_true": sum(a and b for a, b in pairs),
        "ours_only": sum(a and not b for a, b in pairs),
        "theirs_only": sum(b and not a for a, b in pairs),
        "both_false": sum(not a and not b for a, b in pairs),
    }
