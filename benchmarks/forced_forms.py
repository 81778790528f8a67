"""The forced condition's forms against ocg's own matcher (docs/METHODS.md, "Forcing the order").

    .venv/bin/python benchmarks/forced_forms.py [--out benchmarks/results/forced_forms.json]
    .venv/bin/python benchmarks/forced_forms.py --smoke [--out FILE]   # seconds: 2 sets of each size

Two figures, written to one JSON file (METHODS quotes it; tests/generation/test_constrained.py
checks the quoted figures against it):

1. Concepts confined to their bare word: for the concept sets' distinct (word, part of speech)
   pairs, those whose grammar admits only the word itself, with the lexicon alone (lemminflect's
   getAllInflections, grammar version 1) and as the grammar builds them now (its rules for unknown
   words where the lexicon has no entry for the part of speech).
2. The gap between what the grammar admits and what the matcher accepts in context: for every
   four-concept set in the dataset's order, every admitted form of each concept is put in a
   sentence the set's grammar admits, bare ("Dog frisbees catch throw.") or after a free word
   ("the", the adjective "big", the pronoun "they"), the other concepts as they are; the probed
   concept counts as accepted when the matcher (ocg.metrics.coverage, the default rule) matches
   it there. A regular expression cannot see the tagger's context, so the grammar cannot admit only
   what the matcher accepts; this measures how often the two part.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "forced_forms.json"
CONTEXTS = {
    "bare": "",
    "after 'the'": "the",
    "after an adjective ('big')": "big",
    "after a pronoun ('they')": "they",
}


def bare_concepts(sets: int | None = None) -> dict:
    """Per set size: the distinct (word, pos) pairs, and those admitting only the word, before and
    now; over the first `sets` concept sets of each size (None: all)."""
    import lemminflect

    from ocg.data import load_concept_sets
    from ocg.generation.ordered_grammar import inflections

    out = {}
    for n in (4, 5):
        pairs = sorted({(c.word, c.pos) for s in load_concept_sets(n)[:sets] for c in s.concepts})
        lexicon_only = [
            f"{w}_{p}"
            for w, p in pairs
            if not lemminflect.getAllInflections(w, upos="VERB" if p == "V" else "NOUN")
        ]
        now = [f"{w}_{p}" for w, p in pairs if inflections(w, p) == (w,)]
        out[f"{n}_concepts"] = {
            "distinct_concepts": len(pairs),
            "no_lexicon_entry": lexicon_only,
            "bare_word_only_v1": sorted(set(lexicon_only) | set(now)),
            "bare_word_only_now": now,
        }
    return out


def probes(sets: int | None = None):
    """(sentence, concepts, pos_pattern, probed position, form, context) for every probe (of the
    first `sets` four-concept sets; None: all); each sentence is checked to be one its set's
    grammar admits."""
    import re

    from ocg.data import load_concept_sets
    from ocg.generation.ordered_grammar import inflections, ordered_regex

    for s in load_concept_sets(4)[:sets]:
        words, pos = [c.word for c in s.concepts], "".join(c.pos for c in s.concepts)
        grammar = re.compile(ordered_regex(words, pos))
        for i, (word, p) in enumerate(zip(words, pos)):
            for form in inflections(word, p):
                for context, lead in CONTEXTS.items():
                    parts = list(words)
                    parts[i] = f"{lead} {form}" if lead else form
                    text = " ".join(parts)
                    sentence = text[0].upper() + text[1:] + "."
                    assert grammar.fullmatch(sentence), sentence
                    yield sentence, words, pos, i, form, context


def gap(sets: int | None = None) -> dict:
    import pandas as pd

    from ocg.metrics.coverage import load_nlp, score_coverage

    rows = pd.DataFrame(
        probes(sets), columns=["sentence", "concepts", "pos_pattern", "position", "form", "context"]
    )
    scored = score_coverage(
        rows["sentence"], rows["concepts"], load_nlp(), pos_patterns=rows["pos_pattern"]
    )
    rows["accepted"] = [m[i] != -1 for m, i in zip(scored["match_positions"], rows["position"])]
    rows["pos"] = [p[i] for p, i in zip(rows["pos_pattern"], rows["position"])]
    out: dict[str, Any] = {
        "admitted_sentences": len(rows),
        "rejected": int((~rows.accepted).sum()),
        "by_context": {},
    }
    for context, d in rows.groupby("context", sort=False):
        out["by_context"][context] = {
            "admitted": len(d),
            "rejected": int((~d.accepted).sum()),
            "by_pos": {
                p: {"admitted": len(g), "rejected": int((~g.accepted).sum())}
                for p, g in d.groupby("pos")
            },
            "examples_rejected": d[~d.accepted]["sentence"].head(4).tolist(),
        }
    return out


def main() -> None:
    from importlib import metadata

    # recording.py, beside this file, is imported here: tests load the module by its path
    from recording import add_smoke_options, provenance, smoke_out

    from ocg.generation.ordered_grammar import GRAMMAR_VERSION
    from ocg.metrics.coverage import DEFAULT_RULE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    add_smoke_options(parser, "the first 2 concept sets of each size", results=False)
    args = parser.parse_args()
    args.out = smoke_out(args, RESULTS, RESULTS.name)
    sets = 2 if args.smoke else None
    result = {
        "grammar_version": GRAMMAR_VERSION,
        "lemminflect": metadata.version("lemminflect"),
        "spacy": metadata.version("spacy"),
        "matching_rule": DEFAULT_RULE,
        "concepts": bare_concepts(sets),
        "gap": gap(sets),
        **({"smoke": "the first 2 concept sets of each size"} if args.smoke else {}),
        **provenance(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    g = result["gap"]
    print(
        f"{args.out}: {g['admitted_sentences']} admitted sentences, {g['rejected']} probed concepts rejected"
    )
    for context, c in g["by_context"].items():
        print(
            f"  {context}: {c['rejected']} of {c['admitted']} rejected; e.g. {c['examples_rejected'][:2]}"
        )


if __name__ == "__main__":
    main()
