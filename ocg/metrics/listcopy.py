"""Answers that copy the concept list, counted so that coverage w/ order's reward for echoing the
prompt can be seen (docs/METHODS.md, "Answers that copy the list").

Read from what coverage stored per answer (`tokens`, `match_positions`, `order_positions`): no
second spaCy pass. A token *stands for* concept i when it is the token coverage matched to it
first or used for it in the order check, or its lower-cased text is the concept word or that of
one of those tokens (a later mention of the same form; another inflection of a later mention is
missed: "runs ... running"). Glue: a token with no letter or digit (punctuation) and the
words "and", "a", "an", "the" (any case).
- `copies_list`: the answer is in order, and some tokens t1 < ... < tn, ti standing for concept
  i, have nothing but glue between consecutive ones ("Bobsle, push and run the jump"), and read
  as a list: punctuation or "and" between two of them, or at most one written otherwise than its
  concept word ("Bobsle push run jump", "Machine demonstrates use sew"); "The person demonstrated
  sewing using a machine." composes the concepts (three inflected, no separator) and is no copy.
- `bare_list`: every concept is present and every token is glue or stands for some concept:
  the answer is the concepts and nothing else ("Bobsle push run jump.", in any order).
"""

from __future__ import annotations

import pandas as pd

GLUE_WORDS = frozenset({"and", "a", "an", "the"})
MAX_OTHER_FORMS = (
    1  # a run with no separator copies the list only while this many concepts are inflected
)
LIST_FLAGS = ("copies_list", "bare_list")


def is_glue(token: str) -> bool:
    return not any(c.isalnum() for c in token) or token.lower() in GLUE_WORDS


def _stand_ins(tokens: list[str], positions: list[list[int]], concepts) -> list[set[int]]:
    """Per concept, the token positions that stand for it (see the module docstring)."""
    lowered = [t.lower() for t in tokens]
    out = []
    for known, word in zip(positions, concepts):
        forms = {lowered[p] for p in known if 0 <= p < len(tokens)} | {str(word).lower()}
        out.append({i for i, t in enumerate(lowered) if t in forms})
    return out


def _run_in_order(tokens: list[str], stand: list[set[int]], concepts=None) -> bool:
    """Some t1 < ... < tn, ti in stand[i], with only glue between consecutive ones, that reads as a
    list: a separator (punctuation or "and") between two of them, or at most one of them written
    otherwise than its concept word (a phrase inflects: "demonstrated sewing using a machine")."""
    words = [str(c).lower() for c in concepts] if concepts is not None else None
    if not stand:
        return False

    def other(
        i: int, k: int
    ) -> int:  # 1 where token i, standing for concept k, is not the concept word
        return 0 if words is None or not words[k] or tokens[i].lower() == words[k] else 1

    # per reachable token: the (separated, other forms) states of runs ending there, kept minimal
    states = {i: {(False, other(i, 0))} for i in stand[0]}
    for k, nxt in enumerate(stand[1:], start=1):
        reached: dict[int, set] = {}
        for j in nxt:
            for i, seen in states.items():
                between = tokens[i + 1 : j]
                if i < j and all(is_glue(t) for t in between):
                    separated = any(
                        not any(c.isalnum() for c in t) or t.lower() == "and" for t in between
                    )
                    reached.setdefault(j, set()).update(
                        (sep or separated, n + other(j, k)) for sep, n in seen
                    )
        if not reached:
            return False
        states = {j: {(sep, min(n, 2)) for sep, n in seen} for j, seen in reached.items()}
    return any(sep or n <= MAX_OTHER_FORMS for seen in states.values() for sep, n in seen)


def list_flags_of(tokens, first, used, *, all_present: bool, in_order: bool, concepts=None) -> dict:
    """copies_list and bare_list of one answer from its stored tokens, match positions and concepts."""
    if tokens is None or first is None or not all_present:
        return {"copies_list": False, "bare_list": False}
    tokens = list(tokens)
    positions = [[int(f), int(u)] for f, u in zip(first, used if used is not None else first)]
    stand = _stand_ins(
        tokens, positions, concepts if concepts is not None else [""] * len(positions)
    )
    concept_tokens = set().union(*stand) if stand else set()
    return {
        "copies_list": bool(in_order) and _run_in_order(tokens, stand, concepts),
        "bare_list": all(i in concept_tokens or is_glue(t) for i, t in enumerate(tokens)),
    }


def list_flags(answers: pd.DataFrame) -> pd.DataFrame:
    """Both flags per answer; all False where coverage was not scored (no tokens stored)."""
    if "tokens" not in answers:
        return pd.DataFrame(False, index=answers.index, columns=list(LIST_FLAGS))
    used = (
        answers["order_positions"] if "order_positions" in answers else answers["match_positions"]
    )
    seen: dict = {}  # identical answers to one concept list (about 30% of a group) are read once
    rows = []
    concepts = answers["concepts"] if "concepts" in answers else [None] * len(answers)
    for t, f, u, p, o, c in zip(
        answers["tokens"],
        answers["match_positions"],
        used,
        answers["all_present"],
        answers["in_order"],
        concepts,
    ):
        key = tuple(None if x is None else tuple(x) for x in (t, f, u, c)) + (bool(p), bool(o))
        rows.append(
            seen[key]
            if key in seen
            else seen.setdefault(
                key, list_flags_of(t, f, u, all_present=bool(p), in_order=bool(o), concepts=c)
            )
        )
    return pd.DataFrame(rows, index=answers.index, columns=list(LIST_FLAGS))


def flag_texts(
    texts: pd.Series, concepts: pd.Series, pos_patterns: pd.Series | None = None
) -> pd.DataFrame:
    """all_present, in_order and both list flags for answers not yet scored (notebook 01,
    benchmarks/list_copies.py): coverage's matching as scoring runs it, then the flags."""
    from . import coverage

    texts = texts.map(lambda a: a.strip() if isinstance(a, str) else "")
    job = coverage.CoverageJob(
        texts,
        concepts,
        coverage.load_nlp("auto"),
        pos_patterns=pos_patterns,
        n_process=coverage.processes(),
    )
    try:
        matched = job.result()
    finally:
        job.close()
    return pd.concat(
        [matched[["all_present", "in_order"]], list_flags(matched.assign(concepts=list(concepts)))],
        axis=1,
    )
