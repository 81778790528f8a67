"""Score one model's generations: per answer, per group, per (model, condition, template).

Writes under outputs/scores/<model>/: answers.parquet, groups.parquet, summary.parquet and
signature.json (how every metric was computed; written last, its presence marks a complete
scoring). Each metric has a key: everything its values depend on (the generations, the
scoring settings that concern it, the models and packages actually used). A re-run recomputes
exactly the metrics whose key changed, or that were missing (pBLEURT without its checkpoint,
perplexity without its model), and keeps the others; `redo` recomputes all. The neural
metrics keep per-text caches, so added generations only score what is new.
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
from .paths import PARAMS_DIR, scores_dir
from .provenance import provenance

SCORING_FILE = PARAMS_DIR / "scoring.yaml"
METRICS = ("coverage", "pbleu", "distinct", "diverse", "pbleurt", "perplexity")
# The columns each metric owns, in the answers or the groups table.
ANSWER_COLUMNS = {"coverage": ["all_present", "in_order", "coverage_frac", "match_positions", "tokens"],
                  "distinct": ["distinct_2"], "perplexity": ["perplexity", "ppl_status"]}
GROUP_COLUMNS = {"diverse": ["diverse_rate"], "pbleu": ["pbleu"], "pbleurt": ["pbleurt"]}
GROUP_KEYS = ["model", "condition", "template_id", "set_id"]
SUMMARY_KEYS = ["model", "condition", "template_id"]
CONFIG_KEYS = {"spacy_model": str, "spacy_batch_size": int, "matching_rule": str,
               "bleurt_checkpoint": str, "bleurt_batch_size": int, "perplexity_model": str,
               "perplexity_fallback": (str, type(None)), "perplexity_batch_size": int, "metrics": list}


def load_scoring_config(path: str | Path = SCORING_FILE, **overrides) -> dict:
    path = Path(path)
    config = read_yaml(path) or {}
    if not isinstance(config, dict):
        raise OcgInputError(str(path), "expected a mapping of scoring settings")
    config.update({k: v for k, v in overrides.items() if v is not None or k == "perplexity_fallback"})
    for key in config:
        if key not in CONFIG_KEYS:
            raise OcgInputError(f"{path}: {key}", f"unknown key; known: {sorted(CONFIG_KEYS)}")
        if not isinstance(config[key], CONFIG_KEYS[key]) or isinstance(config[key], bool):
            raise OcgInputError(f"{path}: {key}", f"got {config[key]!r}")
    for key in CONFIG_KEYS:
        if key not in config:
            raise OcgInputError(f"{path}: {key}", "missing")
    for key in ("spacy_batch_size", "bleurt_batch_size", "perplexity_batch_size"):
        if config[key] < 1:
            raise OcgInputError(f"{path}: {key}", f"got {config[key]}; expected a positive integer")
    check_metrics(config["metrics"], f"{path}: metrics")
    if config["matching_rule"] not in coverage.MATCHING_RULES:
        raise OcgInputError(f"{path}: matching_rule", f"got {config['matching_rule']!r}; known: "
                                                      f"{list(coverage.MATCHING_RULES)}")
    return config


def check_metrics(metrics, where: str) -> list[str]:
    if not isinstance(metrics, (list, tuple)) or not metrics:
        raise OcgInputError(where, f"got {metrics!r}; expected a list of metrics from {list(METRICS)}")
    unknown = sorted({m for m in metrics if m not in METRICS}, key=str)
    if unknown:
        raise OcgInputError(where, f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    return list(metrics)


def _inputs_hash(model_dir: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(model_dir.glob("*.jsonl")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _pct(x) -> float:
    return 100.0 * float(x)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


# -- what each metric's values depend on -----------------------------------------------------------

def metric_key(metric: str, config: dict, inputs_sha256: str, resolved: dict) -> dict:
    """Everything `metric`'s values depend on; a change means they must be recomputed."""
    key = {"inputs_sha256": inputs_sha256}
    if metric == "coverage":
        key.update(spacy_model=resolved["spacy_model"], spacy=_version("spacy"),
                   rule=config["matching_rule"], lookups=_version("spacy-lookups-data"),
                   columns=ANSWER_COLUMNS["coverage"])
    elif metric == "pbleu":
        key.update(sacrebleu=bleu.signature())
    elif metric == "distinct":
        key.update(tokenizer="13a", sacrebleu=_version("sacrebleu"))
    elif metric == "diverse":
        key.update(rule="distinct stripped answers / answers")
    elif metric == "pbleurt":
        key.update(checkpoint=config["bleurt_checkpoint"], bleurt_pytorch=_version("bleurt-pytorch"),
                   transformers=_version("transformers"), torch=_version("torch"))
    elif metric == "perplexity":
        key.update(requested=config["perplexity_model"], used=resolved["perplexity_used"],
                   lmppl=_version("lmppl"), transformers=_version("transformers"), torch=_version("torch"))
    return key


def stale_metrics(old: dict | None, keys: dict[str, dict]) -> list[str]:
    """Metrics whose values on disk do not match `keys`, or were missing when last scored."""
    if not old or "metric_keys" not in old:
        return list(keys)
    stale = []
    for metric, key in keys.items():
        if old["metric_keys"].get(metric) != key or old.get(metric, {}).get("status") == "missing":
            stale.append(metric)
    return stale


# -- neural metrics with per-text caches ---------------------------------------------------------

def _perplexities(texts: pd.Series, config: dict, used: tuple, cache_path: Path, redo: bool, log
                  ) -> tuple[pd.DataFrame, dict]:
    name, path, reason = used
    sig = {"requested": config["perplexity_model"], "used": name, "fallback_reason": reason,
           "batch_size": config["perplexity_batch_size"], "lmppl": _version("lmppl"),
           "padding": "right", "short_texts": "NaN under 2 tokens", "long_texts": "truncated"}
    if name is None:
        log(f"perplexity missing: {reason}")
        return (pd.DataFrame({"perplexity": math.nan, "ppl_status": "missing"}, index=texts.index),
                dict(sig, status="missing"))
    cache = pd.read_parquet(cache_path) if cache_path.exists() and not redo else \
        pd.DataFrame(columns=["model", "text", "perplexity", "ppl_status"])
    cache = cache[cache["model"] == name]
    known = dict(zip(cache["text"], zip(cache["perplexity"], cache["ppl_status"])))
    wanted = [t for t in dict.fromkeys(texts) if t not in known]
    if wanted:
        log(f"perplexity: {len(wanted):,} distinct texts with {name}")
        lm = perplexity.load_lm(path)
        values, status = perplexity.score_perplexity(wanted, lm, config["perplexity_batch_size"])
        fresh = pd.DataFrame({"model": name, "text": wanted, "perplexity": [values[t] for t in wanted],
                              "ppl_status": [status[t] for t in wanted]})
        cache = pd.concat([cache, fresh], ignore_index=True)
        write_parquet(cache_path, cache)
        known.update(zip(fresh["text"], zip(fresh["perplexity"], fresh["ppl_status"])))
    out = pd.DataFrame({"perplexity": [known[t][0] for t in texts],
                        "ppl_status": [known[t][1] for t in texts]}, index=texts.index)
    return out, dict(sig, status="ok")


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

def _resolve(config: dict, metrics: list[str]) -> dict:
    """The models actually used: spaCy pipeline, perplexity model (or why none)."""
    out = {"spacy_model": None, "perplexity_used": None, "perplexity": (None, None, None)}
    if "coverage" in metrics:
        nlp = coverage.load_nlp(config["spacy_model"])
        out["nlp"] = nlp
        out["spacy_model"] = f"{nlp.meta['lang']}_{nlp.meta['name']}=={nlp.meta['version']}"
    if "perplexity" in metrics:
        try:
            out["perplexity"] = perplexity.resolve_model(config["perplexity_model"], config["perplexity_fallback"])
        except perplexity.PerplexityModelUnavailable as exc:
            out["perplexity"] = (None, None, str(exc))
        out["perplexity_used"] = out["perplexity"][0]
    return out


def score_model(model_dir: str | Path, metrics=None, out_dir: str | Path | None = None,
                redo: bool = False, config_file: str | Path = SCORING_FILE, progress: bool = True,
                **overrides) -> Path:
    """Score one model directory of generations; returns the directory of its scores."""
    model_dir = Path(model_dir)
    config = load_scoring_config(config_file, **overrides)
    metrics = check_metrics(list(metrics or config["metrics"]), "metrics")
    records = read_generations(model_dir)  # every record checked: bad ones stop here, before any work
    if records.empty:
        raise OcgInputError(str(model_dir), "no generations (*.jsonl) to score")
    out = Path(out_dir or scores_dir()) / model_dir.name
    inputs_hash = _inputs_hash(model_dir)
    sig_path = out / "signature.json"
    old = read_json(sig_path) if sig_path.exists() and not redo else None
    resolved = _resolve(config, metrics)
    keys = {m: metric_key(m, config, inputs_hash, resolved) for m in metrics}
    stale = stale_metrics(old, keys)
    if old and set(old.get("metrics", [])) != set(metrics):
        stale = list(keys)  # another metric set: recompute the tables as asked
    if not stale:
        return out
    log = (lambda msg: tqdm.write(f"[score {model_dir.name}] {msg}")) if progress else (lambda msg: None)
    reused = [m for m in metrics if m not in stale]
    if reused:
        log(f"up to date: {', '.join(reused)}; recomputing: {', '.join(stale)}")
    t0 = time.perf_counter()
    timings = {}

    answers = records[["instance_id", "model", "condition", "template_id", "set_id", "perm_index",
                       "pos_pattern", "concepts", "answer", "answer_status"]].copy()
    if "answer_source" in records:
        answers["answer_source"] = records["answer_source"].fillna("raw")
    answers = pd.concat([answers, degenerate.flag_answers(answers["answer"])], axis=1)
    texts = answers["answer"].map(lambda a: a if isinstance(a, str) else "")
    answers["n_tokens"] = texts.map(lambda t: len(bleu.tokenize_13a(t)))
    signature = {"metrics": metrics, "inputs_sha256": inputs_hash, "generations": str(model_dir),
                 "failed_answers": "scored as empty text (no concepts, no n-grams)", "metric_keys": keys}
    old_answers = pd.read_parquet(out / "answers.parquet").set_index("instance_id") if reused else None
    old_groups = pd.read_parquet(out / "groups.parquet").set_index(GROUP_KEYS) if reused else None

    for metric in ("coverage", "distinct", "perplexity"):
        if metric not in metrics:
            continue
        t = time.perf_counter()
        if metric in reused:
            cols = old_answers.loc[answers["instance_id"], ANSWER_COLUMNS[metric]]
            answers = pd.concat([answers, cols.set_index(answers.index)], axis=1)
            signature[metric] = old[metric]
            continue
        if metric == "coverage":
            cov = coverage.score_coverage(answers["answer"], answers["concepts"], resolved["nlp"],
                                          config["spacy_batch_size"], config["matching_rule"],
                                          answers["pos_pattern"])
            answers = pd.concat([answers, cov], axis=1)
            nlp = resolved["nlp"]
            signature["coverage"] = {
                "spacy_model": f"{nlp.meta['lang']}_{nlp.meta['name']}",
                "spacy_model_version": nlp.meta["version"], "spacy": _version("spacy"),
                "pipes": nlp.pipe_names, "matching_rule": config["matching_rule"],
                "lemma_lookup": f"spacy-lookups-data {_version('spacy-lookups-data')} en lemma_lookup",
                "rule": "see docs/METHODS.md, 'Concept matching'; order: left-to-right first later match",
                "measured_quality": {k: v for k, v in coverage.MATCHING_QUALITY.items()
                                     if k in ("labelled_pairs", config["matching_rule"], "commongen_lemma")}}
        elif metric == "distinct":
            answers["distinct_2"] = answers["answer"].map(diversity.distinct2_sentence)
            signature["distinct"] = {"tokenizer": "13a (sacrebleu)", "per_sentence": "unique bigrams / tokens",
                                     "pooled": "unique bigrams / bigrams over the aggregate", "empty": 0.0}
        else:
            ppl, signature["perplexity"] = _perplexities(texts, config, resolved["perplexity"],
                                                         out / "perplexity_cache.parquet", redo, log)
            answers = pd.concat([answers, ppl], axis=1)
        timings[metric] = time.perf_counter() - t

    grouped = list(answers.groupby(GROUP_KEYS, sort=True))
    groups = pd.DataFrame([dict(zip(GROUP_KEYS, key), n=len(g)) for key, g in grouped])
    group_texts = [list(texts.loc[g.index]) for _, g in grouped]
    for metric in ("diverse", "pbleu", "pbleurt"):
        if metric not in metrics:
            continue
        t = time.perf_counter()
        if metric in reused:
            col = GROUP_COLUMNS[metric][0]
            groups[col] = old_groups.loc[pd.MultiIndex.from_frame(groups[GROUP_KEYS]), col].to_numpy()
            signature[metric] = old[metric]
            continue
        if metric == "diverse":
            groups["diverse_rate"] = [diversity.diverse_rate(tx) for tx in group_texts]
            signature["diverse"] = {"rule": "distinct whitespace-stripped answers / answers, per group"}
        elif metric == "pbleu":
            groups["pbleu"] = [bleu.pairwise_bleu(tx) for tx in group_texts]
            signature["pbleu"] = {"sacrebleu": bleu.signature(), "pairs": "all ordered pairs i != j"}
        else:
            scores, signature["pbleurt"] = _bleurt_scores(group_texts, config, out / "bleurt_cache.parquet",
                                                          redo, log)
            groups["pbleurt"] = [bleurt.pairwise_bleurt(tx, scores) for tx in group_texts] if scores \
                else math.nan
        timings[metric] = time.perf_counter() - t

    if "diverse_rate" in groups:  # a group's value is given to each of its permutations (Table 2)
        answers = answers.merge(groups[GROUP_KEYS + ["diverse_rate"]], on=GROUP_KEYS, how="left")
    summary = summarise(answers, groups)
    for metric in ("pbleurt", "perplexity"):
        if metric in metrics and signature[metric].get("status") == "missing":
            summary[f"{metric}_missing_reason"] = signature[metric].get("reason") or \
                signature[metric].get("fallback_reason")
    signature.update(recomputed=stale, reused=reused, timings_s={k: round(v, 2) for k, v in timings.items()},
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
    if not gen_dir.is_dir():
        raise OcgInputError(str(gen_dir), "no such generations directory")
    dirs = sorted(p for p in gen_dir.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
    if models:
        missing = sorted(set(models) - {p.name for p in dirs})
        if missing:
            raise OcgInputError(str(gen_dir), f"no generations for {missing}")
        dirs = [p for p in dirs if p.name in models]
    for p in dirs:  # every file checked before any metric runs
        read_generations(p)
    return [score_model(p, **kwargs) for p in dirs]
