"""An LLM judge's rubric and how its reply is read (docs/METHODS.md, "LLM judge").

One fixed rubric per answer: is the sentence grammatical and plausible (1-5), and in which order
do the concepts appear in it. The judge's order verdict is set beside ocg's deterministic order
check (`in_order`); their disagreements are counted. The rubric's text is hashed
(`prompt_sha256`) into the judge's key, so a changed rubric is never served from the cache.
"""

from __future__ import annotations

import hashlib
import json
import re

SYSTEM = (
    "You are a careful annotator of English sentences. Reply with one JSON object and nothing else."
)
RUBRIC = """Concepts: {concepts}
Sentence: {answer}

1. Rate the sentence from 1 to 5: 5 = grammatical and describes a plausible everyday scene;
3 = understandable but with errors or an odd scene; 1 = ungrammatical, nonsensical or not a sentence.
2. List the concepts that appear in the sentence (in any inflected form), in the order in which
they first appear in it; leave out those that do not appear.

Reply as {{"score": <1-5>, "order": ["<concept>", ...]}}"""


def messages(answer: str, concepts: list[str]) -> list[dict]:
    """The chat messages asking the judge about one answer."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": RUBRIC.format(concepts=", ".join(concepts), answer=answer)},
    ]


def prompt_sha256() -> str:
    """sha256 of the rubric and system prompt: in the judge's key and signature."""
    return hashlib.sha256(f"{SYSTEM}\n{RUBRIC}".encode()).hexdigest()


def parse(reply: str | None, concepts: list[str]) -> tuple[float, list[str] | None]:
    """(score 1-5 or NaN, the concepts in the order the judge read them or None) from a reply; a
    reply that is no such JSON object gives (NaN, None): unjudged, never a guess."""
    found = re.search(r"\{.*\}", reply or "", re.S)
    try:
        data = json.loads(found.group()) if found else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        return float("nan"), None
    score = data.get("score")
    score = (
        float(score)
        if isinstance(score, (int, float)) and not isinstance(score, bool) and 1 <= score <= 5
        else float("nan")
    )
    order = data.get("order")
    known = {c.lower() for c in concepts}
    order = (
        [str(c).lower() for c in order if str(c).lower() in known]
        if isinstance(order, list)
        else None
    )
    return score, order


def judged_in_order(order: list[str] | None, concepts: list[str]) -> float:
    """1.0 when the judge read every concept, in the asked order; 0.0 otherwise; NaN unjudged."""
    if order is None:
        return float("nan")
    return float(order == [c.lower() for c in concepts])
