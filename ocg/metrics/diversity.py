"""Distinct-2 (both forms) and Diverse Rate (docs/METHODS.md, "Metrics"). Tokens: sacrebleu's 13a, as BLEU.

- distinct-2, per sentence (Li et al. 2016; the paper-table column): #unique bigrams / #tokens
  of one answer, averaged over answers. An empty answer scores 0 (no distinct bigram).
- distinct-2, pooled (the paper's formula read literally): #unique bigrams / #bigrams over all
  answers of the aggregate.
- Diverse Rate: #distinct answers (whitespace-stripped) / #answers in a group of permutations.
"""

from __future__ import annotations

from collections.abc import Iterable

from .bleu import tokenize_13a


def _text(answer) -> str:
    return answer if isinstance(answer, str) else ""


def bigrams(tokens: tuple[str, ...]) -> list[tuple[str, str]]:
    return list(zip(tokens, tokens[1:]))


def distinct2_sentence(answer) -> float:
    tokens = tokenize_13a(_text(answer))
    return len(set(bigrams(tokens))) / len(tokens) if tokens else 0.0


def distinct2_pooled(answers: Iterable) -> float:
    unique, total = set(), 0
    for a in answers:
        grams = bigrams(tokenize_13a(_text(a)))
        unique.update(grams)
        total += len(grams)
    return len(unique) / total if total else 0.0


def diverse_rate(answers: list) -> float:
    """NaN for a group of one answer (`permutations: 1`): one answer has nothing to differ from,
    and 1/1 would read as perfectly diverse."""
    if len(answers) < 2:
        return float("nan")
    return len({_text(a).strip() for a in answers}) / len(answers)
