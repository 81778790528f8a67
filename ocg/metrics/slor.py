"""SLOR, an acceptability score that runs offline (Lau, Clark and Lappin 2017; Kann et al. 2018):
the scoring language model's log probability of the answer minus its unigram log probability,
per token (docs/METHODS.md, "Acceptability").

    SLOR = (ln P_LM(s) - ln P_uni(s)) / T = -ln(perplexity) - U / T

over the T tokens perplexity scores (the LM's tokens after the first, truncated to its context;
metrics/lm_nll.py), so the LM's part is perplexity's own value, read from its cache: the LM is
not run again. U is the unigram log probability of the same tokens: each word of the answer
(letters, digits and inner apostrophes; `WORD`) has its wordfreq frequency in English, floored
at FLOOR for a word wordfreq does not list, and its natural log is spread evenly over the LM's
tokens that overlap the word (by the tokenizer's character offsets); a token in no word
(punctuation, a space) has unigram log probability 0. So U sums each word's log frequency once
when all its tokens are scored, and the first token's share is left out as the LM leaves it out.
Higher: more acceptable than the words' frequencies alone predict.
"""

from __future__ import annotations

import math
from functools import lru_cache

import regex

WORD = regex.compile(r"[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*")
FLOOR = 1e-9  # a word wordfreq does not list: below its English list's least frequent (1e-8)
LANG = "en"


@lru_cache(maxsize=200_000)
def word_logprob(word: str) -> float:
    """Natural log of the word's unigram frequency (wordfreq, English), floored at FLOOR."""
    import wordfreq

    return math.log(wordfreq.word_frequency(word, LANG, minimum=FLOOR))


def token_unigrams(text: str, offsets: list[tuple[int, int]]) -> list[float]:
    """Per LM token (its character offsets in `text`): its share of the unigram log probability."""
    shares, first, n = [0.0] * len(offsets), 0, len(offsets)
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
            shares[i] += word_logprob(m.group()) / len(overlapping)
    return shares


def unigram_of_scored(text: str, offsets: list) -> tuple[float, int]:
    """(U, T): the unigram log probability of the tokens perplexity scores (all but the first),
    and their number, from the offsets of the tokenization perplexity uses."""
    shares = token_unigrams(text, [tuple(o) for o in offsets])
    return sum(shares[1:]), len(shares) - 1


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


def slor(perplexity: float, unigram: float, n_tokens: int) -> float:
    """SLOR from perplexity over `n_tokens` scored tokens and their unigram log probability."""
    if not n_tokens or perplexity is None or not math.isfinite(perplexity):
        return math.nan
    return -math.log(perplexity) - unigram / n_tokens


def slor_values(texts: list[str], perplexities: dict, tokenizer, limit: int) -> dict[str, float]:
    """SLOR of each distinct text, from its perplexity (NaN where perplexity is NaN)."""
    scorable = [
        t
        for t in dict.fromkeys(texts)
        if t.strip() and math.isfinite(perplexities.get(t, math.nan))
    ]
    out = {t: math.nan for t in texts}
    for text, offsets in zip(scorable, offsets_of(scorable, tokenizer, limit)):
        out[text] = slor(perplexities[text], *unigram_of_scored(text, offsets))
    return out
