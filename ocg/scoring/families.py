"""The scoring families: each declares once the columns it writes, what its values depend on
(its key, for staleness), and how it computes them with their signature.

Adding a metric: one Family here plus its function in ocg/metrics/, and, if the paper's tables
report it, one Metric in ocg/metrics/registry.py (label, direction, aggregation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from ..metrics import bleu, bleurt, coverage, diversity
from . import neural


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass
class Context:
    """What a family's computation may read."""
    answers: pd.DataFrame          # one row per answer: ids, concepts, pos_pattern, answer, flags
    texts: pd.Series               # the answer as text ("" for a failed extraction)
    group_texts: list[list[str]]   # per group (model, condition, template, set): its answers
    config: dict
    resolved: dict                 # models actually used (spaCy pipeline, perplexity model)
    out: Path                      # the model's scores folder (caches live there)
    redo: bool
    log: Callable[[str], None]


@dataclass(frozen=True)
class Family:
    name: str
    level: str  # "answers" or "groups": the table its columns go to
    columns: tuple[str, ...]
    key: Callable[[dict, dict], dict]  # (config, resolved) -> what the values depend on
    compute: Callable[[Context], tuple[pd.DataFrame | dict, dict]]  # -> columns, signature
    # Optional: starts the computation in other processes and returns a handle whose
    # `result()` gives what `compute` would, so scoring goes on with other families meanwhile.
    start: Callable[[Context], Any] | None = None


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
    rule = ctx.config["matching_rule"]
    job = coverage.CoverageJob(ctx.answers["answer"], ctx.answers["concepts"], nlp, ctx.config["spacy_batch_size"],
                               rule, ctx.answers["pos_pattern"],
                               coverage.processes(ctx.config.get("spacy_processes", "auto")))
    return _Started(job, {
        "spacy_model": f"{nlp.meta['lang']}_{nlp.meta['name']}", "spacy_model_version": nlp.meta["version"],
        "spacy": _version("spacy"), "pipes": nlp.pipe_names, "matching_rule": rule,
        "matmul": coverage.MATMUL, "attribute_ruler": coverage.ATTRIBUTE_RULER,
        "lemma_lookup": f"spacy-lookups-data {_version('spacy-lookups-data')} en lemma_lookup",
        "rule": "see docs/METHODS.md, 'Concept matching'; order: left-to-right first later match",
        "measured_quality": coverage.quality_for_signature(rule)})


def _coverage(ctx: Context):
    return _start_coverage(ctx).result()


def _distinct(ctx: Context):
    return ({"distinct_2": ctx.answers["answer"].map(diversity.distinct2_sentence)},
            {"tokenizer": "13a (sacrebleu)", "per_sentence": "unique bigrams / tokens",
             "pooled": "unique bigrams / bigrams over the aggregate", "empty": 0.0})


def _perplexity(ctx: Context):
    return neural.perplexities(ctx.texts, ctx.config, ctx.resolved["perplexity"],
                               ctx.out / "perplexity_cache.parquet", ctx.redo, ctx.log)


def _diverse(ctx: Context):
    return ({"diverse_rate": [diversity.diverse_rate(tx) for tx in ctx.group_texts]},
            {"rule": "distinct whitespace-stripped answers / answers, per group"})


def _pbleu(ctx: Context):
    return ({"pbleu": [bleu.pairwise_bleu(tx) for tx in ctx.group_texts]},
            {"sacrebleu": bleu.signature(), "pairs": "all ordered pairs i != j"})


def _pbleurt(ctx: Context):
    scores, sig = neural.bleurt_scores(ctx.group_texts, ctx.config, ctx.out / "bleurt_cache.parquet",
                                       ctx.redo, ctx.log)
    values = [bleurt.pairwise_bleurt(tx, scores) for tx in ctx.group_texts] if scores \
        else [math.nan] * len(ctx.group_texts)
    return {"pbleurt": values}, sig


COVERAGE_COLUMNS = ("all_present", "in_order", "coverage_frac", "match_positions", "order_positions", "tokens",
                    *coverage.VARIANT_COLUMNS)  # every rule's verdicts, for the sensitivity view

FAMILIES = {f.name: f for f in (
    Family("coverage", "answers", COVERAGE_COLUMNS,
           lambda c, r: {"spacy_model": r["spacy_model"], "spacy": _version("spacy"), "rule": c["matching_rule"],
                         "lookups": _version("spacy-lookups-data"), "columns": list(COVERAGE_COLUMNS),
                         "matmul": coverage.MATMUL},
           _coverage, start=_start_coverage),
    Family("pbleu", "groups", ("pbleu",), lambda c, r: {"sacrebleu": bleu.signature()}, _pbleu),
    Family("distinct", "answers", ("distinct_2",),
           lambda c, r: {"tokenizer": "13a", "sacrebleu": _version("sacrebleu")}, _distinct),
    Family("diverse", "groups", ("diverse_rate",),
           lambda c, r: {"rule": "distinct stripped answers / answers"}, _diverse),
    Family("pbleurt", "groups", ("pbleurt",),
           lambda c, r: {"checkpoint": c["bleurt_checkpoint"], "bleurt_pytorch": _version("bleurt-pytorch"),
                         "transformers": _version("transformers"), "torch": _version("torch")},
           _pbleurt),
    Family("perplexity", "answers", ("perplexity", "ppl_status"),
           lambda c, r: {"requested": c["perplexity_model"], "used": r["perplexity_used"],
                         "lmppl": _version("lmppl"), "transformers": _version("transformers"),
                         "torch": _version("torch")},
           _perplexity),
)}
