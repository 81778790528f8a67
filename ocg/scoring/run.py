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
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..embedded import EMBEDDED_PREFIX
from ..errors import OcgInputError
from ..generation.completeness import asked_records
from ..generation.lock import exclusive
from ..generation.store import read_generations
from ..hub import unavailable_reason
from ..io import refuse_link, remove_temps
from ..layout import ModelGenerations, ModelScores, outputs
from ..metrics import bleu, coverage, degenerate, diversity, listcopy, perplexity
from ..metrics.statistics import pooled_sums, ratios, sufficient_statistics
from ..provenance import provenance
from ..records import Signature
from .config import SCORING_FILE, check_metrics, load_scoring_config
from .families import FAMILIES, Context, code_digest
from .samples import keys_with_sample, sample_column, summarise_over_samples
from .scoreset import holds_scores, unfinished_reason, write_score_set

GROUP_KEYS = ["model", "condition", "template_id", "set_id"]
SUMMARY_KEYS = ["model", "condition", "template_id"]


def _inputs_hash(model_dir: Path) -> str:
    h = hashlib.sha256()
    for path in ModelGenerations(model_dir).stores():
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def metric_key(metric: str, config: dict, inputs_sha256: str, resolved: dict) -> dict:
    """Everything `metric`'s values depend on; a change means they must be recomputed."""
    family = FAMILIES[metric]
    return {"inputs_sha256": inputs_sha256, "version": family.version, **family.key(config, resolved)}


def stale_metrics(old: Signature | None, keys: dict[str, dict]) -> list[str]:
    """Metrics whose values on disk do not match `keys`, or were missing when last scored."""
    if not old or not old.metric_keys:
        return list(keys)
    return [m for m, key in keys.items() if old.metric_keys.get(m) != key or old.status(m) == "missing"]


def _resolve(config: dict, metrics: list[str]) -> dict:
    """The models actually used: spaCy pipeline, perplexity model (or why none)."""
    out = {"spacy_model": None, "perplexity_used": None, "perplexity": (None, None, None)}
    if "coverage" in metrics:
        nlp = coverage.load_nlp(config["spacy_model"], config["spacy_pipeline"])
        out["nlp"] = nlp
        out["spacy_model"] = f"{nlp.meta['lang']}_{nlp.meta['name']}=={nlp.meta['version']}"
    if "perplexity" in metrics:
        fallback = config["perplexity_fallback"]
        try:
            out["perplexity"] = perplexity.resolve_model(config["perplexity_model"], fallback)
        except perplexity.PerplexityModelUnavailable as exc:
            out["perplexity"] = (None, None, str(exc))
        if out["perplexity"][2] and fallback and not fallback.startswith(EMBEDDED_PREFIX) \
                and (why := unavailable_reason(fallback)) is not None:  # a fallback that cannot be had either
            out["perplexity"] = (None, None, f"{out['perplexity'][2]}, but perplexity_fallback {fallback!r} "
                                             f"cannot be loaded either: {why}")
        out["perplexity_used"] = out["perplexity"][0]
    return out


def _scores_folder(model_dir: Path, out_dir) -> Path:
    """Where a model's score set is written: ocg's own folder, never a link's target."""
    folder = ModelScores.of(model_dir.name, out_dir).folder
    refuse_link(folder)
    return folder


def _checked(model_dir: Path, metrics, config_file, overrides: dict) -> tuple[dict, list[str], pd.DataFrame, dict]:
    """The settings, the metrics, the asked records and their completeness, every one checked
    (the records against the run card too): bad input stops here, before anything is written."""
    config = load_scoring_config(config_file, **overrides)
    metrics = check_metrics(list(metrics or config["metrics"]), "metrics")
    records = read_generations(model_dir, prompts=False)  # scoring reads no prompt
    if records.empty:
        raise OcgInputError(str(model_dir), "no generations (*.jsonl) to score")
    records, completeness = asked_records(model_dir, records)
    return config, metrics, records, completeness


def score_model(model_dir: str | Path, metrics=None, out_dir: str | Path | None = None,
                redo: bool = False, config_file: str | Path = SCORING_FILE, progress: bool = True,
                **overrides) -> Path:
    """Score one model directory of generations; returns the directory of its scores."""
    model_dir = Path(model_dir)
    config, metrics, records, completeness = _checked(model_dir, metrics, config_file, overrides)
    with exclusive(_scores_folder(model_dir, out_dir)):
        return _score_model(model_dir, records, completeness, config, metrics, out_dir, redo, progress)


def _score_model(model_dir: Path, records: pd.DataFrame, completeness: dict, config: dict, metrics: list[str],
                 out_dir, redo: bool, progress: bool) -> Path:
    """score_model, under the scores folder's lock."""
    out = _scores_folder(model_dir, out_dir)
    log = (lambda msg: tqdm.write(f"[score {model_dir.name}] {msg}")) if progress else (lambda msg: None)
    remove_temps(out)  # left by a killed write; nobody else writes here while we hold the lock
    inputs_hash = _inputs_hash(model_dir)
    unfinished = None if redo else unfinished_reason(out)
    if unfinished and holds_scores(out):
        log(f"unfinished score set: {unfinished}; recomputing everything")
    old = Signature.read(ModelScores(out).signature) if not (redo or unfinished) else None
    resolved = _resolve(config, metrics)
    keys = {m: metric_key(m, config, inputs_hash, resolved) for m in metrics}
    stale = stale_metrics(old, keys)
    if old and set(old.metrics) != set(metrics):
        stale = list(keys)  # another metric set: recompute the tables as asked
    if old and old.completeness != completeness:
        stale = list(keys)  # other records kept, or another run status: recompute and record it
    reflag = bool(old) and old.flags_version != degenerate.FLAGS_VERSION  # flags defined otherwise now
    if not stale and not reflag:
        return out
    reused = [m for m in metrics if m not in stale]
    if reused:
        log(f"up to date: {', '.join(reused)}; recomputing: {', '.join(stale) or 'the answer flags only'}")
    t0 = time.perf_counter()
    timings = {}

    answers = records[["instance_id", "model", "condition", "template_id", "set_id", "perm_index",
                       "pos_pattern", "concepts", "answer", "answer_status"]].copy()
    answers["answer_source"] = records["answer_source"].fillna("raw") if "answer_source" in records else "raw"
    answers["finish_reason"] = records["finish_reason"] if "finish_reason" in records else None
    if (samples := sample_column(records)) is not None:  # repeated samples: a group is a group of one sample
        answers.insert(1, "sample", samples)
    group_keys = keys_with_sample(GROUP_KEYS, answers)
    texts = answers["answer"].map(lambda a: a if isinstance(a, str) else "")
    ctx = Context(answers=answers, texts=texts, group_texts=[], config=config, resolved=resolved, keys=keys,
                  out=out, redo=redo, log=log)
    blocks = {}  # each family's block of the signature: how its values were computed
    old_tables = {level: pd.read_parquet(ModelScores(out).table(level)) for level in ("answers", "groups")} if reused else {}
    started = {}  # families running in worker processes (coverage) while the rest is computed here
    try:
        for metric in stale:
            if FAMILIES[metric].start is not None:
                started[metric] = (FAMILIES[metric].start(ctx), time.perf_counter())
        answers = pd.concat([answers, degenerate.flag_answers(answers["answer"], answers.get("finish_reason"))], axis=1)
        answers["n_tokens"] = texts.map(lambda t: len(bleu.tokenize_13a(t)))
        grouped = list(answers.groupby(group_keys, sort=True))
        groups = pd.DataFrame([dict(zip(group_keys, key), n=len(g)) for key, g in grouped])
        ctx.answers, ctx.group_texts = answers, [list(texts.loc[g.index]) for _, g in grouped]
        tables = {"answers": answers, "groups": groups}
        _compute(metrics, reused, started, ctx, tables, old_tables, old, blocks, timings, group_keys)
    finally:
        for handle, _ in started.values():
            handle.close()
    answers, groups = tables["answers"], tables["groups"]
    answers = answers.assign(**listcopy.list_flags(answers))  # from coverage's tokens and positions

    if "diverse_rate" in groups:  # a group's value is given to each of its permutations (Table 2)
        answers = answers.merge(groups[group_keys + ["diverse_rate"]], on=group_keys, how="left")
    summary = summarise_over_samples(answers, groups, SUMMARY_KEYS, summarise)
    for metric in [m for m in FAMILIES if m in metrics]:  # a neural family without its model
        if blocks[metric].get("status") == "missing":
            summary[f"{metric}_missing_reason"] = blocks[metric].get("reason") or blocks[metric].get("fallback_reason")
    signature = Signature(
        metrics=metrics, inputs_sha256=inputs_hash, generations=str(model_dir),
        failed_answers="scored as empty text (no concepts, no n-grams)", metric_keys=keys,
        completeness=completeness, code_sha256={m: code_digest(FAMILIES[m]) for m in metrics},
        flags_version=degenerate.FLAGS_VERSION, families=blocks,
        recomputed=stale, reused=reused, timings_s={k: round(v, 2) for k, v in timings.items()},
        seconds=round(time.perf_counter() - t0, 2), config=config, provenance=provenance())
    write_score_set(out, {"answers": answers, "groups": groups, "summary": summary}, signature)
    return out


def family_block(key: dict, record: dict) -> dict:
    """A family's block in signature.json: its key verbatim (the staleness key, in the same
    words), then what its computation measured or chose (`record`; a block stored before the key
    was in it gets it added: a reused family's key is the one just checked)."""
    return {"key": key, **{k: v for k, v in record.items() if k != "key"}}


def _compute(metrics, reused, started, ctx, tables, old_tables, old, blocks, timings, group_keys=GROUP_KEYS) -> None:
    """Each family's columns into its table (answers or groups): copied from the old tables
    where reused, collected where started, else computed here."""
    answer_keys = ["instance_id", *group_keys[len(GROUP_KEYS):]]  # and the sample, in a sampled run
    for level, index in (("answers", answer_keys), ("groups", group_keys)):
        table = tables[level]
        for metric in [m for m in metrics if FAMILIES[m].level == level]:
            family, t = FAMILIES[metric], time.perf_counter()
            if metric in reused:  # the same rows, in the same order: copy the columns across
                kept = old_tables[level].set_index(index).loc[pd.MultiIndex.from_frame(table[index])
                                                                if len(index) > 1 else table[index[0]]]
                columns = {c: kept[c].to_numpy() for c in family.columns}
                record = old.families[metric]
            elif metric in started:
                handle, t = started[metric]
                columns, record = handle.result()
                timings[metric] = time.perf_counter() - t
            else:
                columns, record = family.compute(ctx)
                timings[metric] = time.perf_counter() - t
            blocks[metric] = family_block(ctx.keys[metric], record)
            table = table.assign(**{c: list(columns[c]) if not isinstance(columns, pd.DataFrame)
                                    else columns[c].to_numpy() for c in family.columns})
        tables[level] = table


def summarise(answers: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, template): the paper's metrics (metrics/registry.py, as ratios of
    sufficient statistics), plus counts and Lin et al.'s per-concept coverage."""
    stats = sufficient_statistics(answers, groups, SUMMARY_KEYS)
    summary = pd.concat([stats[["n"]].rename(columns={"n": "n_answers"}),
                         stats[["n_groups"]] if "n_groups" in stats else None, ratios(stats)], axis=1)
    a = answers.groupby(SUMMARY_KEYS, sort=True)
    if "coverage_frac" in answers:
        summary["coverage_per_concept"] = 100.0 * a["coverage_frac"].mean()
    summary = summary.join(pooled_sums(stats))  # n_all_present, n_in_order: Ordered Rate pooled later
    if "distinct_2" in answers:
        summary["distinct_2_pooled"] = 100.0 * a["answer"].agg(diversity.distinct2_pooled)
    if "perplexity" in answers:
        summary["n_ppl_unscored"] = (stats["n"] - stats["n_perplexity"]).astype(int)
    for flag in degenerate.FLAG_COLUMNS:
        summary[f"n_{flag}"] = a[flag].sum().astype(int)
    return summary.reset_index()


def score_all(gen_dir: str | Path | None = None, models: list[str] | None = None, metrics=None,
              out_dir: str | Path | None = None, redo: bool = False, config_file: str | Path = SCORING_FILE,
              progress: bool = True, **overrides) -> list[Path]:
    """Score every model directory under a generations root (or the listed ones)."""
    gen_dir = Path(gen_dir or outputs().generations)
    if not gen_dir.is_dir():
        raise OcgInputError(str(gen_dir), "no such generations directory")
    dirs = sorted(p for p in gen_dir.iterdir() if p.is_dir() and ModelGenerations(p).stores())
    if models:
        missing = sorted(set(models) - {p.name for p in dirs})
        if missing:
            raise OcgInputError(str(gen_dir), f"no generations for {missing}")
        dirs = [p for p in dirs if p.name in models]
    # every file checked before any metric runs (the records are read again per model: memory)
    checked = {p: _checked(p, metrics, config_file, overrides)[:2] for p in dirs}
    with ExitStack() as locks:  # every scores folder ours before any is written
        for p in dirs:
            locks.enter_context(exclusive(_scores_folder(p, out_dir)))
        return [_score_model(p, *asked_records(p, read_generations(p, prompts=False)), *checked[p], out_dir, redo, progress)
                for p in dirs]
