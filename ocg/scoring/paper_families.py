"""The paper's scoring families (coverage, pBLEU, distinct-2, Diverse Rate, pBLEURT, perplexity):
each declares once the columns it writes, its settings, how it computes them, its version and its
code. The registry of every family is ocg/scoring/families.py; what a family is, family.py."""

from __future__ import annotations

import math
from importlib import metadata

from ..metrics import (
    attribute_ruler,
    bleu,
    bleurt,
    bleurt_compat,
    coverage,
    diversity,
    lm_nll,
    matching,
    perplexity,
    registry,
    textprep,
    token_forms,
)
from ..weights import hub
from . import neural
from .family import Context, Family


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


class _Started:
    """A started family: `result()` -> (columns, signature); `close()` stops its workers."""

    def __init__(self, job, signature: dict):
        self.job, self.signature = job, signature

    def result(self):
        return self.job.result(), self.signature

    def close(self) -> None:
        self.job.close()


def _start_coverage(ctx: Context) -> _Started:
    nlp = ctx.resolved["nlp"]
    rule = ctx.config.matching_rule
    job = coverage.CoverageJob(
        ctx.answers["answer"],
        ctx.answers["concepts"],
        nlp,
        batch_size=ctx.config.spacy_batch_size,
        rule=rule,
        pos_patterns=ctx.answers["pos_pattern"],
        n_process=coverage.processes(ctx.config.spacy_processes),
    )
    return _Started(
        job,
        {
            "spacy_model": f"{nlp.meta['lang']}_{nlp.meta['name']}",
            "spacy_model_version": nlp.meta["version"],
            "spacy": _version("spacy"),
            "spacy_pipeline": ctx.config.spacy_pipeline,
            "pipes": nlp.pipe_names,
            "matching_rule": rule,
            "matmul": coverage.MATMUL,
            "attribute_ruler": coverage.ATTRIBUTE_RULER,
            "lemma_lookup": f"spacy-lookups-data {_version('spacy-lookups-data')} en lemma_lookup",
            "rule": "see docs/METHODS.md, 'Concept matching'; order: left-to-right first later match",
            "measured_quality": coverage.quality_for_signature(rule),
        },
    )


def _coverage(ctx: Context):
    return _start_coverage(ctx).result()


def _distinct(ctx: Context):
    return (
        {"distinct_2": ctx.answers["answer"].map(diversity.distinct2_sentence)},
        {
            "per_sentence": "unique bigrams / tokens",
            "pooled": "unique bigrams / bigrams over the aggregate",
            "empty": 0.0,
        },
    )


def _perplexity(ctx: Context):
    return neural.perplexities(
        ctx.texts,
        ctx.config,
        ctx.resolved["perplexity"],
        ctx.keys["perplexity"],
        ctx.out / "perplexity_cache.parquet",
        ctx.redo,
        ctx.log,
    )


def _diverse(ctx: Context):
    return {"diverse_rate": [diversity.diverse_rate(tx) for tx in ctx.group_texts]}, {}


def _pbleu(ctx: Context):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(
        1, user_api="blas"
    ):  # small products; coverage's workers share the CPUs meanwhile
        values = [bleu.pairwise_bleu(tx) for tx in ctx.group_texts]
    return {"pbleu": values}, {"sacrebleu": bleu.signature(), "pairs": "all ordered pairs i != j"}


def _pbleurt(ctx: Context):
    scores, sig = neural.bleurt_scores(
        ctx.group_texts,
        ctx.config,
        ctx.keys["pbleurt"],
        ctx.out / "bleurt_cache.parquet",
        ctx.redo,
        ctx.log,
    )
    values = (
        [bleurt.pairwise_bleurt(tx, scores) for tx in ctx.group_texts]
        if scores
        else [math.nan] * len(ctx.group_texts)
    )
    return {"pbleurt": values}, sig


COVERAGE_COLUMNS = (
    "all_present",
    "in_order",
    "coverage_frac",
    "match_positions",
    "order_positions",
    "tokens",
    *matching.POS_COLUMNS,
    *matching.POS_COUNT_COLUMNS,
    *coverage.VARIANT_COLUMNS,
)  # every rule's verdicts, for the sensitivity view


def packages(*names: str) -> dict:
    return {name: _version(name) for name in names}


def _perplexity_implementation() -> dict:
    """Which code computes perplexity (lmppl or ocg's own) and the packages it runs on."""
    impl = perplexity.implementation()
    return {
        "implementation": impl,
        **packages(*(["lmppl"] if impl == "lmppl" else []), "transformers", "torch", "tokenizers"),
    }


PAPER_FAMILIES = {
    f.name: f
    for f in (
        Family(
            registry.FAMILIES["coverage"],
            COVERAGE_COLUMNS,
            lambda c, r: {
                "spacy_model": r["spacy_model"],
                "spacy_pipeline": c.spacy_pipeline,
                "rule": c.matching_rule,
                **packages("spacy", "spacy-lookups-data", "thinc", "numpy"),
                "columns": list(COVERAGE_COLUMNS),
                "matmul": coverage.MATMUL,
            },
            _coverage,
            start=_start_coverage,
            version=10,
            code=(
                coverage,
                matching,
                textprep,
                token_forms,
                attribute_ruler,
                _start_coverage,
                _coverage,
            ),
        ),
        Family(
            registry.FAMILIES["pbleu"],
            ("pbleu",),
            lambda c, r: {"sacrebleu": bleu.signature(), **packages("numpy")},
            _pbleu,
            version=2,
            code=(bleu, _pbleu),
        ),
        Family(
            registry.FAMILIES["distinct"],
            ("distinct_2",),
            lambda c, r: {"tokenizer": "13a", **packages("sacrebleu")},
            _distinct,
            version=2,
            code=(
                diversity._text,
                diversity.bigrams,
                diversity.distinct2_sentence,
                bleu.tokenize_13a,
                _distinct,
            ),
        ),
        Family(
            registry.FAMILIES["diverse"],
            ("diverse_rate",),
            lambda c, r: {"rule": "distinct stripped answers / answers"},
            _diverse,
            version=3,
            code=(diversity.diverse_rate, _diverse),
        ),
        Family(
            registry.FAMILIES["pbleurt"],
            ("pbleurt",),
            lambda c, r: {
                "checkpoint": c.bleurt_checkpoint,
                "revision": hub.revision(c.bleurt_checkpoint),
                **packages("bleurt-pytorch", "transformers", "torch", "sentencepiece", "numpy"),
            },
            _pbleurt,
            version=2,
            neural=True,
            code=(
                bleurt,
                bleurt_compat,
                bleu.pair_weights,
                neural.TextCache,
                neural.bleurt_scores,
                _pbleurt,
            ),
        ),
        Family(
            registry.FAMILIES["perplexity"],
            ("perplexity", "ppl_status"),
            lambda c, r: {
                "requested": c.perplexity_model,
                "used": r["perplexity_used"],
                "revision": hub.revision(r["perplexity"][1]) if r["perplexity"][1] else None,
                **_perplexity_implementation(),
            },
            _perplexity,
            version=3,
            neural=True,
            code=(perplexity, lm_nll, neural.TextCache, neural.perplexities, _perplexity),
        ),
    )
}
