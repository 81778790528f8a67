"""Score one model's generations: per answer, per group, per (model, condition, template).

Writes under outputs/scores/<model>/: answers.parquet, groups.parquet, summary.parquet and
signature.json (how every metric was computed, and the checksums of the three tables: written
last, it marks a complete score set; scoreset.py). Each scoring family (families.py) has a key:
everything its values depend on (the generations, the family's code version, the settings that
concern it, the models and packages actually used). A re-run recomputes exactly the families
whose key changed, or that were missing (pBLEURT without its checkpoint, perplexity without its
model), and keeps the others; `redo`, or an unfinished score set, recomputes all. One scorer at
a time per scores folder (the writer lock generation takes).
"""

from __future__ import annotations

import hashlib
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..config.requests import ScoringRequest
from ..config.scoring_file import ScoringFile
from ..core.errors import OcgInputError
from ..core.files import refuse_link, remove_temps
from ..core.layout import ModelGenerations, ModelScores, outputs
from ..core.lock import exclusive
from ..core.names import check_name
from ..core.progress import say
from ..core.provenance import provenance
from ..generation.answer_store.completeness import asked_records
from ..generation.answer_store.store import read_generations
from ..metrics import coverage, degenerate, perplexity
from ..records import Signature
from ..weights.embedded import EMBEDDED_PREFIX
from ..weights.hub import unavailable_reason
from . import judging
from .families import FAMILIES
from .family import Context, code_digest
from .scoreset import holds_scores, unfinished_reason, write_score_set
from .settings import check_metrics, load_scoring_config
from .summary import summarise as summarise  # re-exported: ocg.scoring.run.summarise
from .summary import summarised
from .tables import answer_rows, compute


def _inputs_hash(model_dir: Path) -> str:
    h = hashlib.sha256()
    for path in ModelGenerations(model_dir).stores():
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def stale_metrics(old: Signature | None, keys: dict[str, dict]) -> list[str]:
    """Metrics whose values on disk do not match `keys`, or were missing when last scored (unless
    their block says a retry cannot help: `retry: false`, a judge the run file does not name), or
    scored in part (`retry: true`: a judge's failed requests, asked again)."""
    if not old or not old.metric_keys:
        return list(keys)
    return [
        m
        for m, key in keys.items()
        if old.metric_keys.get(m) != key or old.family(m).get("retry", old.status(m) == "missing")
    ]  # no judge: nothing to retry


def _resolve(config: ScoringFile, metrics: list[str]) -> dict:
    """The models actually used: spaCy pipeline, perplexity model (or why none)."""
    out: dict[str, Any] = {
        "spacy_model": None,
        "perplexity_used": None,
        "perplexity": (None, None, None),
    }
    if "coverage" in metrics:
        nlp = coverage.load_nlp(config.spacy_model, config.spacy_pipeline)
        out["nlp"] = nlp
        out["spacy_model"] = f"{nlp.meta['lang']}_{nlp.meta['name']}=={nlp.meta['version']}"
    if {"perplexity", "slor"} & set(metrics):  # SLOR reads perplexity's values
        fallback = config.perplexity_fallback
        try:
            out["perplexity"] = perplexity.resolve_model(config.perplexity_model, fallback)
        except perplexity.PerplexityModelUnavailable as exc:
            out["perplexity"] = (None, None, str(exc))
        if (
            out["perplexity"][2]
            and fallback
            and not fallback.startswith(EMBEDDED_PREFIX)
            and (why := unavailable_reason(fallback)) is not None
        ):  # a fallback that cannot be had either
            out["perplexity"] = (
                None,
                None,
                f"{out['perplexity'][2]}, but perplexity_fallback {fallback!r} "
                f"cannot be loaded either: {why}",
            )
        out["perplexity_used"] = out["perplexity"][0]
    return out


def _scores_folder(model_dir: Path, out_dir) -> Path:
    """Where a model's score set is written: ocg's own folder, never a link's target."""
    folder = ModelScores.of(model_dir.name, out_dir).folder
    refuse_link(folder)
    return folder


@dataclass(frozen=True)
class _Writing:
    """Where a scoring call writes, whether it recomputes everything, whether it logs."""

    out_dir: str | Path | None = None
    redo: bool = False
    progress: bool = True


def _checked(
    model_dir: Path, scoring: ScoringFile, metrics: list[str] | None
) -> tuple[list[str], pd.DataFrame, dict]:
    """The metrics (None: the scoring settings'), the asked records and their completeness,
    every one checked (the records against the run card too): bad input stops here, before
    anything is written."""
    metrics = check_metrics(list(metrics or scoring.metrics), "metrics")
    if "judge" in metrics:  # the judge's entry and its local folder (judging.check_loadable)
        judging.check_loadable(scoring.judge, scoring.judge_models_file)
    records = read_generations(model_dir, prompts=False)  # scoring reads no prompt
    if records.empty:
        raise OcgInputError(str(model_dir), "no generations (*.jsonl) to score")
    records, completeness = asked_records(model_dir, records)
    return metrics, records, completeness


def score_model(
    model_dir: str | Path,
    *,
    metrics: list[str] | None = None,
    out_dir: str | Path | None = None,
    redo: bool = False,
    progress: bool = True,
    scoring: ScoringFile | None = None,
) -> Path:
    """Score one model directory of generations; returns the directory of its scores.
    `scoring`: the checked scoring settings (load_scoring_config; None: params/scoring.yaml's);
    `metrics`: None scores the settings' metrics."""
    model_dir = Path(model_dir)
    config = scoring if scoring is not None else load_scoring_config()
    metrics, records, completeness = _checked(model_dir, config, metrics)
    with exclusive(_scores_folder(model_dir, out_dir)):
        return _score_model(
            model_dir,
            records,
            completeness,
            config=config,
            metrics=metrics,
            request=_Writing(out_dir, redo, progress),
        )


def _score_model(
    model_dir: Path,
    records: pd.DataFrame,
    completeness: dict,
    *,
    config: ScoringFile,
    metrics: list[str],
    request: _Writing,
) -> Path:
    """score_model, under the scores folder's lock: what is stale, the tables, the signature."""
    out, redo = _scores_folder(model_dir, request.out_dir), request.redo
    log = (
        (lambda msg: say(f"[score {model_dir.name}] {msg}"))
        if request.progress
        else (lambda msg: None)
    )
    remove_temps(out)  # left by a killed write; nobody else writes here while we hold the lock
    inputs_hash = _inputs_hash(model_dir)
    old = _old_signature(out, redo, log)
    resolved = _resolve(config, metrics)
    keys = {m: FAMILIES[m].key(config, resolved, inputs_hash) for m in metrics}
    stale = _stale(old, metrics, keys, completeness)
    reflag = (
        old is not None and old.flags_version != degenerate.FLAGS_VERSION
    )  # flags defined otherwise now
    if not stale and not reflag:
        return out
    reused = [m for m in metrics if m not in stale]
    if reused:
        log(
            f"up to date: {', '.join(reused)}; recomputing: {', '.join(stale) or 'the answer flags only'}"
        )
    t0 = time.perf_counter()
    answers = answer_rows(records)
    log(f"{len(answers):,} answers: {', '.join(stale) or 'the answer flags'}")
    ctx = Context(
        answers=answers,
        texts=answers["answer"].map(lambda a: a if isinstance(a, str) else ""),
        group_texts=[],
        config=config,
        resolved=resolved,
        keys=keys,
        out=out,
        redo=redo,
        log=log,
    )
    old_tables = (
        {level: pd.read_parquet(ModelScores(out).table(level)) for level in ("answers", "groups")}
        if reused
        else {}
    )
    tables, blocks, timings = compute(metrics, reused, ctx, old_tables, old)
    answers, summary = summarised(tables["answers"], tables["groups"], metrics, blocks)
    signature = Signature(
        metrics=metrics,
        inputs_sha256=inputs_hash,
        generations=str(model_dir),
        failed_answers="scored as empty text (no concepts, no n-grams)",
        metric_keys=keys,
        completeness=completeness,
        code_sha256={m: code_digest(FAMILIES[m]) for m in metrics},
        flags_version=degenerate.FLAGS_VERSION,
        families=blocks,
        recomputed=stale,
        reused=reused,
        timings_s={k: round(v, 2) for k, v in timings.items()},
        seconds=round(time.perf_counter() - t0, 2),
        config=config.recorded(),
        provenance=provenance(),
    )
    write_score_set(
        out, {"answers": answers, "groups": tables["groups"], "summary": summary}, signature
    )
    if "judge" in stale and (failed := judging.failure(blocks["judge"])):
        raise failed  # after the score set is written: every other family is kept
    return out


def _old_signature(out: Path, redo: bool, log) -> Signature | None:
    """The signature of the score set there, if one is finished and `redo` not asked."""
    unfinished = None if redo else unfinished_reason(out)
    if unfinished and holds_scores(out):
        log(f"unfinished score set: {unfinished}; recomputing everything")
    return Signature.read(ModelScores(out).signature) if not (redo or unfinished) else None


def _stale(
    old: Signature | None, metrics: list[str], keys: dict[str, dict], completeness: dict
) -> list[str]:
    """The families to recompute: stale ones, or all where the metric set or the records changed."""
    if old and set(old.metrics) != set(metrics):
        return list(keys)  # another metric set: recompute the tables as asked
    if old and old.completeness != completeness:
        return list(keys)  # other records kept, or another run status: recompute and record it
    return stale_metrics(old, keys)


def scoring_request() -> ScoringRequest:
    """The request of notebook 02 run alone: params/scoring.yaml's settings and metrics over
    every model under outputs/generations."""
    scoring = load_scoring_config()
    return ScoringRequest(scoring=scoring, metrics=list(scoring.metrics))


def score_all(request: ScoringRequest) -> list[Path]:
    """Score every model directory under the request's generations root (or the models it
    lists) with its checked scoring settings and metrics."""
    writing = _Writing(request.scores_dir, request.redo, request.progress)
    gen_dir = Path(request.generations_dir or outputs().generations)
    models = request.models
    if not gen_dir.is_dir():
        raise OcgInputError(str(gen_dir), "no such generations directory")
    dirs = sorted(p for p in gen_dir.iterdir() if p.is_dir() and ModelGenerations(p).stores())
    if models:
        missing = sorted(set(models) - {p.name for p in dirs})
        if missing:
            raise OcgInputError(str(gen_dir), f"no generations for {missing}")
        dirs = [p for p in dirs if p.name in models]
    for p in dirs:  # the folder's name is the model's name in every table written from here
        check_name(str(p), p.name)
    # every file checked before any metric runs (the records are read again per model: memory)
    checked = {p: _checked(p, request.scoring, request.metrics)[0] for p in dirs}
    with ExitStack() as locks:  # every scores folder ours before any is written
        for p in dirs:
            locks.enter_context(exclusive(_scores_folder(p, writing.out_dir)))
        done, failed = [], []
        for p in dirs:
            try:
                done.append(
                    _score_model(
                        p,
                        *asked_records(p, read_generations(p, prompts=False)),
                        config=request.scoring,
                        metrics=checked[p],
                        request=writing,
                    )
                )
            except judging.JudgeFailed as exc:  # written all the same: the next model is scored
                done.append(_scores_folder(p, writing.out_dir))
                failed.append(f"{p.name}: {exc}")
        if failed:
            raise judging.JudgeFailed("; ".join(failed))
        return done
