"""The neural metrics, with per-text caches: perplexity (lmppl) and pairwise BLEURT.

Each text (or pair) is scored once per model or checkpoint and kept in a parquet cache beside
the scores, so added generations only score what is new. A model that cannot be loaded makes
the metric missing, with the reason: never 0, never silently dropped.
"""

from __future__ import annotations

import math
from importlib import metadata
from pathlib import Path

import pandas as pd

from ..io import write_parquet
from ..metrics import bleurt, perplexity


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def perplexities(texts: pd.Series, config: dict, used: tuple, cache_path: Path, redo: bool, log
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


def bleurt_scores(groups: list[list[str]], config: dict, cache_path: Path, redo: bool, log
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
