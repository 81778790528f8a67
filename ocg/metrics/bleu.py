"""Pairwise BLEU within groups, equal to sacrebleu's `sentence_bleu(h, [r])` with its defaults.

sentence_bleu defaults: 13a tokenizer, mixed case, exp smoothing, effective order, 4-grams.
Here n-gram counts are computed once per distinct answer and all ordered pairs of a group are
scored at once with numpy; `tests/metrics/test_metrics.py` checks equality with the sacrebleu loop.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

MAX_ORDER = 4
_tok13a = Tokenizer13a()


def signature() -> str:
    """sacrebleu's own signature string for sentence_bleu's defaults (nrefs:1|case:mixed|...)."""
    metric = BLEU(effective_order=True)
    metric.sentence_score("a", ["a"])  # the signature needs the number of references
    return metric.get_signature().format()


@lru_cache(maxsize=200_000)
def tokenize_13a(text: str) -> tuple[str, ...]:
    """As BLEU._preprocess_segment (no lowercasing) then whitespace split."""
    return tuple(_tok13a(text.rstrip()).split())


def _ngram_counts(tokens: tuple[str, ...]) -> list[Counter]:
    return [
        Counter(tokens[i : i + n] for i in range(len(tokens) - n + 1))
        for n in range(1, MAX_ORDER + 1)
    ]


def pairwise_matrix(texts: list[str]) -> np.ndarray:
    """BLEU (0-100) of every ordered pair: M[h, r] = sentence_bleu(texts[h], [texts[r]])."""
    toks = [tokenize_13a(t) for t in texts]
    k = len(texts)
    lengths = np.array([len(t) for t in toks], dtype=float)
    counts = [_ngram_counts(t) for t in toks]
    correct = np.zeros((MAX_ORDER, k, k))
    total = np.zeros((MAX_ORDER, k))
    for n in range(MAX_ORDER):
        vocab = {g: j for j, g in enumerate({g for c in counts for g in c[n]})}
        mat = np.zeros((k, len(vocab)))
        for i, c in enumerate(counts):
            for g, v in c[n].items():
                mat[i, vocab[g]] = v
        total[n] = mat.sum(axis=1)
        if vocab:
            correct[n] = clipped_matches(mat)
    return _bleu_from_stats(correct, total, lengths)


def clipped_matches(mat: np.ndarray) -> np.ndarray:
    """C[h, r] = sum over n-grams of min(count in h, count in r), for every pair of rows at once.

    For counts a, b >= 0, min(a, b) = sum over t >= 1 of [a >= t][b >= t], so C is a sum of
    matrix products of 0/1 layers (one per count level, rarely more than 2): exact integers,
    and k x k x V work in BLAS instead of a k x k x V array (14,280 pairs per group of 120)."""
    out = np.zeros((mat.shape[0], mat.shape[0]))
    for t in range(1, int(mat.max()) + 1):
        layer = (mat >= t).astype(float)
        out += layer @ layer.T
    return out


def _bleu_from_stats(correct: np.ndarray, total: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """BLEU.compute_bleu with exp smoothing and effective order, for all pairs at once."""
    sys_len = lengths[:, None]
    ref_len = lengths[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
            1.0,
        )
    k = lengths.shape[0]
    log_sum = np.zeros((k, k))
    eff_order = np.zeros((k, 1))
    smooth = np.ones((k, k))
    for n in range(MAX_ORDER):
        t = total[n][:, None] * np.ones((1, k))  # the hypothesis's n-gram count, per pair
        active = t > 0  # sacrebleu stops at the first order with no hypothesis n-grams
        c = correct[n]
        zero = active & (c == 0)
        smooth = np.where(zero, smooth * 2, smooth)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.where(
                c > 0, 100.0 * c / np.where(active, t, 1), 100.0 / (smooth * np.where(active, t, 1))
            )
        log_sum += np.where(active, np.log(prec), 0.0)
        eff_order = eff_order + (total[n][:, None] > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = bp * np.exp(log_sum / np.where(eff_order > 0, eff_order, 1))
    any_match = correct.sum(axis=0) > 0
    return np.where(any_match, score, 0.0)


def pair_weights(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts and the number of ordered position pairs (i != j) for each text pair."""
    counts = Counter(texts)
    unique = list(counts)
    c = np.array([counts[u] for u in unique], dtype=float)
    weights = np.outer(c, c)
    np.fill_diagonal(weights, c * (c - 1))  # identical strings at different positions
    return unique, weights


def pairwise_bleu(texts: list[str]) -> float:
    """Mean sentence BLEU over all ordered pairs of positions i != j (552 for 24 answers, 14,280 for 120)."""
    n = len(texts)
    if n < 2:
        return float("nan")
    unique, weights = pair_weights(texts)
    return float((pairwise_matrix(unique) * weights).sum() / (n * (n - 1)))


def pairwise_bleu_loop(texts: list[str]) -> float:
    """The reference implementation: sacrebleu's sentence_bleu over every ordered pair."""
    from sacrebleu import sentence_bleu

    n = len(texts)
    scores = [
        sentence_bleu(texts[i], [texts[j]]).score for i in range(n) for j in range(n) if i != j
    ]
    return float(np.mean(scores)) if scores else float("nan")
