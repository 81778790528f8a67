"""SLOR, an acceptability score that runs offline (Lau, Clark and Lappin 2017; Kann et al. 2018):
the scoring language model's log probability of the answer minus its unigram log probability,
per token (docs/METHODS.md, "Acceptability").

    SLOR = (ln P_LM(s) - ln P_uni(s)) / T = -ln(perplexity) - U / T

over the T tokens perplexity scores (the LM's tokens after the first, truncated to its context;
metrics/lm_nll.py), so the LM's part is perplexity's own value, read from its cache: the LM is
not run again. U is the unigram log probability of the same tokens: each word of the answer
(letters, digits and inner apostrophes; `WORD`) has its wordfreq frequency in English (case-folded,
from corpora other than the LM's), and its natural log is spread evenly over the LM's tokens that
overlap the word (by the tokenizer's character offsets); a word wordfreq does not list (an invented
word, a misspelling, a rare name) gets unigram probability 1, so it earns no credit and costs what
the LM says; a token in no word (punctuation, a space) has unigram log probability 0. So U sums each word's log frequency once
when all its tokens are scored, and the first token's share is left out as the LM leaves it out.
Higher: more acceptable than the words' frequencies alone predict.
"""

from __future__ import annotations

import math
from functools import lru_cache

import regex

WORD = regex.compile(r"[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*")
FLOOR = 1e-9  # the former rule for a word wordfreq lacks, kept as a sensitivity variant
LANG = "en"


@lru_cache(maxsize=200_000)
def word_logprob(word: str, floor: float | None = None) -> float:
    """Natural log of the word's unigram frequency (wordfreq, English). A word wordfreq does not
    list gets 0 (probability 1: no unigram credit, the least SLOR any estimate could give it),
    or ln(floor) where a floor is given (the former rule: a credit of -ln(floor) nats)."""
    import wordfreq

    frequency = wordfreq.word_frequency(word, LANG)
    if frequency > 0:
        return math.log(frequency)
    return math.log(floor) if floor else 0.0


def token_unigrams(
    text: str, offsets: list[tuple[int, int]], floor: float | None = None
) -> tuple[list[float], list[int]]:
    """Per LM token (its character offsets in `text`): its share of the unigram log probability;
    and per word, the index of its last token (-1: none)."""
    shares, first, n = [0.0] * len(offsets), 0, len(offsets)
    last = []
    for m in WORD.finditer(text):
        start, end = m.span()
        while first < n and offsets[first][1] <= start:  # tokens before the word (offsets increase)
            first += 1
        overlapping, j = [], first
        while j < n and offsets[j][0] < end:
            if offsets[j][1] > start:
                overlapping.append(j)
            j += 1
        for i in overlapping:
            shares[i] += word_logprob(m.group(), floor) / len(overlapping)
        last.append(overlapping[-1] if overlapping else -1)
    return shares, last


def unigram_of_scored(
    text: str, offsets: list, floor: float | None = None
) -> tuple[float, int, int]:
    """(U, T, W): the unigram log probability of the tokens perplexity scores (all but the first),
    their number, and the number of words with a scored token, from the offsets of the
    tokenization perplexity uses."""
    shares, last = token_unigrams(text, [tuple(o) for o in offsets], floor)
    return sum(shares[1:]), len(shares) - 1, sum(i >= 1 for i in last)


def offsets_of(texts: list[str], tokenizer, limit: int, batch: int = 1000) -> list[list]:
    """Each text's token offsets as perplexity tokenizes it (special tokens, truncated to `limit`)."""
    out = []
    for s in range(0, len(texts), batch):
        enc = tokenizer(
            texts[s : s + batch],
            add_special_tokens=True,
            truncation=True,
            max_length=limit,
            return_offsets_mapping=True,
        )
        out += enc["offset_mapping"]
    return out


def slor(perplexity: float, unigram: float, n_tokens: int, per: int | None = None) -> float:
    """SLOR from perplexity over `n_tokens` scored tokens and their unigram log probability,
    normalised per token (or per `per` units: words)."""
    if not n_tokens or perplexity is None or not math.isfinite(perplexity):
        return math.nan
    per = n_tokens if per is None else per
    if not per:
        return math.nan
    return (-math.log(perplexity) * n_tokens - unigram) / per


VARIANTS = ("slor", "slor_per_word", "slor_oov_floor")  # the default, then the sensitivity's


def slor_variants(text: str, perplexity: float, offsets: list) -> dict[str, float]:
    """SLOR as scored (per token, no credit for a word wordfreq lacks), per word, and with the
    former floor of FLOOR for such a word."""
    unigram, n_tokens, n_words = unigram_of_scored(text, offsets)
    floored, _, _ = unigram_of_scored(text, offsets, FLOOR)
    return {
        "slor": slor(perplexity, unigram, n_tokens),
        "slor_per_word": slor(perplexity, unigram, n_tokens, n_words),
        "slor_oov_floor": slor(perplexity, floored, n_tokens),
    }


def slor_values(
    texts: list[str], perplexities: dict, tokenizer, limit: int
) -> dict[str, dict[str, float]]:
    """SLOR (VARIANTS) of each distinct text, from its perplexity (NaN where perplexity is NaN)."""
    scorable = [
        t
        for t in dict.fromkeys(texts)
        if t.strip() and math.isfinite(perplexities.get(t, math.nan))
    ]
    out = {t: dict.fromkeys(VARIANTS, math.nan) for t in texts}
    for text, offsets in zip(scorable, offsets_of(scorable, tokenizer, limit)):
        out[text] = slor_variants(text, perplexities[text], offsets)
    return out
