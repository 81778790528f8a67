"""Score one model's generations: per answer, per group, per (model, condition, template).

Writes under outputs/scores/<model>/: answers.parquet, groups.parquet, summary.parquet and
signature.json (how every metric was computed; written last, its presence marks a complete
scoring). A re-run with the same generations and metrics is skipped unless `redo`; the
neural metrics keep per-text caches, so added generations only score what is new.
"""

from __future__ import annotations

import hashlib
import math
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from .errors import OcgInputError
from .generation.run import generations_dir, read_generations
from .io import read_json, read_yaml, write_json, write_parquet
from .metrics import bleu, bleurt, coverage, degenerate, diversity, perplexity
from .paths import PARAMS_DIR, outputs_dir
from .provenance import provenance

SCORING_FILE = PARAMS_DIR / "scoring.yaml"
METRICS = ("coverage", "pbleu", "distinct", "diverse", "pbleurt", "perplexity")
GROUP_KEYS = ["model", "condition", "template_id", "set_id"]
SUMMARY_KEYS = ["model", "condition", "template_id"]
CONFIG_KEYS = {"spacy_model": str, "spacy_batch_size": int, "lemma_lookup": bool,
               "bleurt_checkpoint": str, "bleurt_batch_size": int, "perplexity_model": str,
               "perplexity_fallback": (str, type(None)), "perplexity_batch_size": int, "metrics": list}


def scores_dir() -> Path:
    return outputs_dir() / "scores"


def load_scoring_config(path: str | Path = SCORING_FILE, **overrides) -> dict:
    path = Path(path)
    config = read_yaml(path) or {}
    config.update({k: v for k, v in overrides.items() if v is not None})
    for key in config:
        if key not in CONFIG_KEYS:
            raise OcgInputError(f"{path}: {key}", f"unknown key; known: {sorted(CONFIG_KEYS)}")
        if not isinstance(config[key], CONFIG_KEYS[key]):
            raise OcgInputError(f"{path}: {key}", f"got {config[key]!r}")
    for key in CONFIG_KEYS:
        if key not in config:
            raise OcgInputError(f"{path}: {key}", "missing")
    unknown = sorted(set(config["metrics"]) - set(METRICS))
    if unknown:
        raise OcgInputError(f"{path}: metrics", f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    return config


def _inputs_hash(model_dir: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(model_dir.glob("*.jsonl")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _pct(x) -> float:
    return 100.0 * float(x)


# -- neural metrics with per-text caches ---------------------------------------------------------

def _perplexities(texts: pd.Series, config: dict, cache_path: Path, redo: bool, log) -> tuple[pd.DataFrame, dict]:
    used, path, reason = perplexity.resolve_model(config["perplexity_model"], config["perplexity_fallback"])
    sig = {"requested": config["perplexity_model"], "used": used, "fallback_reason": reason,
           "batch_size": config["perplexity_batch_size"], "lmppl": metadata.version("lmppl"),
           "padding": "right", "short_texts": "NaN under 2 tokens", "long_texts": "truncated"}
    cache = pd.read_parquet(cache_path) if cache_path.exists() and not redo else \
        pd.DataFrame(columns=["model", "text", "perplexity", "ppl_status"])
    cache = cache[cache["model"] == used]
    known = dict(zip(cache["text"], zip(cache["perplexity"], cache["ppl_status"])))
    wanted = [t for t in dict.fromkeys(texts) if t not in known]
    if wanted:
        log(f"perplexity: {len(wanted):,} distinct texts with {used}")
        lm = perplexity.load_lm(path)
        values, status = perplexity.score_perplexity(wanted, lm, config["perplexity_batch_size"])
        fresh = pd.DataFrame({"model": used, "text": wanted, "perplexity": [values[t] for t in wanted],
                              "ppl_status": [status[t] for t in wanted]})
        cache = pd.concat([cache, fresh], ignore_index=True)
        write_parquet(cache_path, cache)
        known.update(zip(fresh["text"], zip(fresh["perplexity"], fresh["ppl_status"])))
    out = pd.DataFrame({"perplexity": [known[t][0] for t in texts],
                        "ppl_status": [known[t][1] for t in texts]}, index=texts.index)
    return out, sig


def _bleurt_scores(groups: list[list[str]], config: dict, cache_path: Path, redo: bool, log
                   ) -> tuple[dict | None, dict]:
    checkpoint = config["bleurt_checkpoint"]
    sig = {"checkpoint": checkpoint, "batch_size": config["bleurt_batch_size"],
           "order": "references first, candidates second", "scale": "x100"}
    needed = {p for texts in groups for p in bleurt.group_pairs(texts)}
    cache = pd.read_parquet(cache_path) if cache_path.exists() and not redo else \
        pd.DataFrame(columns=["checkpoint", "reference", "candidate", "bleurt"])
    cache = cache[cache["checkpoint"] == checkpoint]
    known = {(r, c): s for r, c, s in zip(cache["reference"], cache["candidate"], cache["bleurt"])}
    wanted = [p for p in needed if p not in known]
    if wanted:
        try:
            tokenizer, model = bleurt.load_bleurt(checkpoint)
        except bleurt.BleurtUnavailable as exc:
            log(f"pBLEURT missing: {exc}")
            return None, dict(sig, status="missing", reason=str(exc))
        log(f"pBLEURT: {len(wanted):,} distinct pairs with {checkpoint}")
        fresh = bleurt.score_pairs(wanted, tokenizer, model, config["bleurt_batch_size"], progress=True)
        add = pd.DataFrame({"checkpoint": checkpoint, "reference": [r for r, _ in fresh],
                            "candidate": [c for _, c in fresh], "bleurt": list(fresh.values())})
        write_parquet(cache_path, pd.concat([cache, add], ignore_index=True))
        known.update(fresh)
    return known, dict(sig, status="ok")


# -- the scoring run -----------------------------------------------------------------------------

def score_model(model_dir: str | Path, metrics=None, out_dir: str | Path | None = None,
                redo: bool = False, config_file: str | Path = SCORING_FILE, progress: bool = True,
                **overrides) -> Path:
    """Score one model directory of generations; returns the directory of its scores."""
    model_dir = Path(model_dir)
    config = load_scoring_config(config_file, **overrides)
    metrics = list(metrics or config["metrics"])
    unknown = sorted(set(metrics) - set(METRICS))
    if unknown:
        raise OcgInputError("metrics", f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    records = read_generations(model_dir)
    if records.empty:
        raise OcgInputError(str(model_dir), "no generations (*.jsonl) to score")
    out = Path(out_dir or scores_dir()) / model_dir.name
    inputs_hash = _inputs_hash(model_dir)
    sig_path = out / "signature.json"
    if sig_path.exists() and not redo:
        old = read_json(sig_path)
        if old.get("inputs_sha256") == inputs_hash and set(metrics) <= set(old.get("metrics", [])):
            return out
    log = (lambda msg: tqdm.write(f"[score {model_dir.name}] {msg}")) if progress else (lambda msg: None)
    t0 = time.perf_counter()
    timings = {}

    answers = records[["instance_id", "model", "condition", "template_id", "set_id", "perm_index",
                       "pos_pattern", "concepts", "answer", "answer_status"]].copy()
    answers = pd.concat([answers, degenerate.flag_answers(answers["answer"])], axis=1)
    texts = answers["answer"].map(lambda a: a if isinstance(a, str) else "")
    answers["n_tokens"] = texts.map(lambda t: len(bleu.tokenize_13a(t)))
    signature = {"metrics": metrics, "inputs_sha256": inputs_hash, "generations": str(model_dir),
                 "failed_answers": "scored as empty text (no concepts, no n-grams)"}

    if "coverage" in metrics:
        t = time.perf_counter()
        nlp = coverage.load_nlp(config["spacy_model"])
        cov = coverage.score_coverage(answers["answer"], answers["concepts"], nlp,
                                      config["spacy_batch_size"], config["lemma_lookup"])
        answers = pd.concat([answers, cov], axis=1)
        signature["coverage"] = {
            "spacy_model": f"{nlp.meta['lang']}_{nlp.meta['name']}", "spacy_model_version": nlp.meta["version"],
            "spacy": metadata.version("spacy"), "pipes": nlp.pipe_names,
            "lemma_lookup": f"spacy-lookups-data {metadata.version('spacy-lookups-data')} en lemma_lookup"
                            if config["lemma_lookup"] else None,
            "rule": "token lemma, lower form or lookup lemma equals the concept word; order: "
                    "left-to-right first later match"}
        timings["coverage"] = time.perf_counter() - t
    if "distinct" in metrics:
        t = time.perf_counter()
        answers["distinct_2"] = answers["answer"].map(diversity.distinct2_sentence)
        signature["distinct"] = {"tokenizer": "13a (sacrebleu)", "per_sentence": "unique bigrams / tokens",
                                 "pooled": "unique bigrams / bigrams over the aggregate", "empty": 0.0}
        timings["distinct"] = time.perf_counter() - t
    if "perplexity" in metrics:
        t = time.perf_counter()
        ppl, signature["perplexity"] = _perplexities(texts, config, out / "perplexity_cache.parquet", redo, log)
        answers = pd.concat([answers, ppl], axis=1)
        timings["perplexity"] = time.perf_counter() - t

    grouped = list(answers.groupby(GROUP_KEYS, sort=True))
    groups = pd.DataFrame([dict(zip(GROUP_KEYS, key), n=len(g)) for key, g in grouped])
    group_texts = [list(texts.loc[g.index]) for _, g in grouped]
    if "diverse" in metrics:
        groups["diverse_rate"] = [diversity.diverse_rate(tx) for tx in group_texts]
        signature["diverse"] = {"rule": "distinct whitespace-stripped answers / answers, per group"}
    if "pbleu" in metrics:
        t = time.perf_counter()
        groups["pbleu"] = [bleu.pairwise_bleu(tx) for tx in group_texts]
        signature["pbleu"] = {"sacrebleu": bleu.signature(), "pairs": "all ordered pairs i != j"}
        timings["pbleu"] = time.perf_counter() - t
    if "pbleurt" in metrics:
        t = time.perf_counter()
        scores, signature["pbleurt"] = _bleurt_scores(group_texts, config, out / "bleurt_cache.parquet", redo, log)
        groups["pbleurt"] = [bleurt.pairwise_bleurt(tx, scores) for tx in group_texts] if scores \
            else math.nan
        timings["pbleurt"] = time.perf_counter() - t

    if "diverse_rate" in groups:  # a group's value is given to each of its permutations (Table 2)
        answers = answers.merge(groups[GROUP_KEYS + ["diverse_rate"]], on=GROUP_KEYS, how="left")
    summary = summarise(answers, groups)
    if "pbleurt" in metrics and signature["pbleurt"]["status"] == "missing":
        summary["pbleurt_missing_reason"] = signature["pbleurt"]["reason"]
    signature.update(timings_s={k: round(v, 2) for k, v in timings.items()},
                     seconds=round(time.perf_counter() - t0, 2), config=config, provenance=provenance())
    write_parquet(out / "answers.parquet", answers)
    write_parquet(out / "groups.parquet", groups)
    write_parquet(out / "summary.parquet", summary)
    write_json(sig_path, signature)
    return out


def summarise(answers: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, template): the paper's metrics in percent, plus counts."""
    rows = []
    group_by_key = {k: g for k, g in groups.groupby(SUMMARY_KEYS)}
    for key, a in answers.groupby(SUMMARY_KEYS, sort=True):
        g = group_by_key[key]
        row = dict(zip(SUMMARY_KEYS, key), n_answers=len(a), n_groups=len(g))
        if "all_present" in a:
            n_all = int(a["all_present"].sum())
            row.update(coverage_wo_order=_pct(a["all_present"].mean()),
                       coverage_w_order=_pct(a["in_order"].mean()),
                       ordered_rate=_pct(a["in_order"].sum() / n_all) if n_all else math.nan,
                       coverage_per_concept=_pct(a["coverage_frac"].mean()),
                       n_all_present=n_all, n_in_order=int(a["in_order"].sum()))
        if "pbleu" in g:
            row["pbleu"] = float(g["pbleu"].mean())
        if "pbleurt" in g:
            row["pbleurt"] = float(g["pbleurt"].mean())
        if "distinct_2" in a:
            row["distinct_2"] = _pct(a["distinct_2"].mean())
            row["distinct_2_pooled"] = _pct(diversity.distinct2_pooled(a["answer"]))
        if "diverse_rate" in g:
            row["diverse_rate"] = _pct(g["diverse_rate"].mean())
        if "perplexity" in a:
            row["perplexity"] = float(np.nanmean(a["perplexity"])) if a["perplexity"].notna().any() else math.nan
            row["n_ppl_unscored"] = int(a["perplexity"].isna().sum())
        for flag in degenerate.FLAG_COLUMNS:
            row[f"n_{flag}"] = int(a[flag].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def score_all(gen_dir: str | Path | None = None, models: list[str] | None = None, **kwargs) -> list[Path]:
    """Score every model directory under a generations root (or the listed ones)."""
    gen_dir = Path(gen_dir or generations_dir())
    dirs = sorted(p for p in gen_dir.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
    if models:
        missing = sorted(set(models) - {p.name for p in dirs})
        if missing:
            raise OcgInputError(str(gen_dir), f"no generations for {missing}")
        dirs = [p for p in dirs if p.name in models]
    return [score_model(p, **kwargs) for p in dirs]


def load_scores(scores_root: str | Path | None = None, models: list[str] | None = None) -> dict:
    """answers, groups and summary of every scored model, concatenated; and their signatures."""
    root = Path(scores_root or scores_dir())
    dirs = sorted(p for p in root.iterdir() if (p / "signature.json").exists()) if root.exists() else []
    if models:
        dirs = [p for p in dirs if p.name in models]
    out = {}
    for table in ("answers", "groups", "summary"):
        frames = [pd.read_parquet(p / f"{table}.parquet") for p in dirs]
        out[table] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    out["signatures"] = {p.name: {k: v for k, v in read_json(p / "signature.json").items()
                                  if k not in ("config",)} for p in dirs}
    return out
