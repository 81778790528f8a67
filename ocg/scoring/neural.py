"""The neural metrics, with per-text caches: perplexity (lmppl or ocg's own) and pairwise BLEURT.

Each text (or pair) is scored once and kept in a parquet cache beside the scores, so added
generations only score what is new. Cached values are served only under the key they were
computed with: the model or checkpoint and its revision (hub commit or directory hash), the
package versions and the family's version; anything else is a miss. A model that cannot be
loaded makes the metric missing, with the reason: never 0, never silently dropped.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd

from ..config.scoring_file import ScoringFile
from ..core.files import write_parquet
from ..metrics import bleurt, perplexity, semantic, slor
from ..weights import hub


class TextCache:
    """Values per text or pair stored under a key; entries under another key are never served
    (and are dropped at the next write)."""

    def __init__(self, path: Path, key: dict, columns: list[str], redo: bool):
        self.path, self.key_fields = (
            path,
            {k: v for k, v in key.items() if k not in ("inputs_sha256", "requested")},
        )
        self.key = hashlib.sha256(
            json.dumps(self.key_fields, sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        table = pd.read_parquet(path) if path.exists() and not redo else pd.DataFrame()
        self.table = (
            table[table["key"] == self.key]
            if "key" in table
            else pd.DataFrame(columns=["key", *columns])
        )

    def rekeyed(self, **changes) -> TextCache:
        return TextCache(
            self.path, {**self.key_fields, **changes}, [c for c in self.table if c != "key"], False
        )

    def add(self, fresh: pd.DataFrame) -> None:
        self.table = pd.concat([self.table, fresh.assign(key=self.key)], ignore_index=True)
        write_parquet(self.path, self.table)


def perplexities(
    texts: pd.Series, config: ScoringFile, used: tuple, key: dict, cache_path: Path, redo: bool, log
) -> tuple[pd.DataFrame, dict]:
    name, path, reason = used
    sig = {
        "requested": config.perplexity_model,
        "used": name,
        "fallback_reason": reason,
        "revision": key.get("revision"),
        "batch_size": config.perplexity_batch_size,
        "batch_tokens": perplexity.TOKEN_BUDGET,
        "implementation": key.get("implementation"),
        "lmppl": key.get("lmppl"),
        "padding": "right",
        "short_texts": "NaN under 2 tokens",
        "long_texts": "truncated",
    }
    if name is None:
        log(f"perplexity missing: {reason}")
        return (
            pd.DataFrame({"perplexity": math.nan, "ppl_status": "missing"}, index=texts.index),
            dict(sig, status="missing"),
        )
    cache = TextCache(cache_path, key, ["text", "perplexity", "ppl_status"], redo)

    def unknown(cache):
        known = dict(
            zip(cache.table["text"], zip(cache.table["perplexity"], cache.table["ppl_status"]))
        )
        return known, [t for t in dict.fromkeys(texts) if t not in known]

    known, wanted = unknown(cache)
    if wanted:
        log(f"perplexity: {len(wanted):,} distinct texts with {name}")
        lm = perplexity.load_lm(path, key.get("implementation"))
        loaded = hub.loaded_revision(lm.config, path)
        if loaded != key.get("revision"):  # the hub served other weights than the key names
            cache, sig["revision"] = cache.rekeyed(revision=loaded), loaded
            known, wanted = unknown(cache)
        values, status = perplexity.score_perplexity(wanted, lm, config.perplexity_batch_size)
        fresh = pd.DataFrame(
            {
                "text": wanted,
                "perplexity": [values[t] for t in wanted],
                "ppl_status": [status[t] for t in wanted],
            }
        )
        cache.add(fresh)
        known.update(zip(fresh["text"], zip(fresh["perplexity"], fresh["ppl_status"])))
    out = pd.DataFrame(
        {"perplexity": [known[t][0] for t in texts], "ppl_status": [known[t][1] for t in texts]},
        index=texts.index,
    )
    return out, dict(sig, status="ok")


def bleurt_scores(
    groups: list[list[str]], config: ScoringFile, key: dict, cache_path: Path, redo: bool, log
) -> tuple[dict | None, dict]:
    checkpoint = config.bleurt_checkpoint
    sig = {
        "checkpoint": checkpoint,
        "revision": key.get("revision"),
        "batch_size": config.bleurt_batch_size,
        "order": "references first, candidates second",
        "scale": "x100",
    }
    needed = {p for texts in groups for p in bleurt.group_pairs(texts)}
    cache = TextCache(cache_path, key, ["reference", "candidate", "bleurt"], redo)

    def unknown(cache):
        t = cache.table
        known = {(r, c): s for r, c, s in zip(t["reference"], t["candidate"], t["bleurt"])}
        return known, [p for p in needed if p not in known]

    known, wanted = unknown(cache)
    if wanted:
        try:
            tokenizer, model = bleurt.load_bleurt(checkpoint)
        except bleurt.BleurtUnavailable as exc:
            log(f"pBLEURT missing: {exc}")
            return None, dict(sig, status="missing", reason=str(exc))
        loaded = hub.loaded_revision(model.config, checkpoint)
        if loaded != key.get("revision"):  # the hub served other weights than the key names
            cache, sig["revision"] = cache.rekeyed(revision=loaded), loaded
            known, wanted = unknown(cache)
        log(f"pBLEURT: {len(wanted):,} distinct pairs with {checkpoint}")
        fresh = bleurt.score_pairs(
            wanted, tokenizer, model, config.bleurt_batch_size, progress=True
        )
        cache.add(
            pd.DataFrame(
                {
                    "reference": [r for r, _ in fresh],
                    "candidate": [c for _, c in fresh],
                    "bleurt": list(fresh.values()),
                }
            )
        )
        known.update(fresh)
    return known, dict(sig, status="ok")


def slor_scores(
    texts: pd.Series,
    config: ScoringFile,
    used: tuple,
    ppl_key: dict,
    cache_path: Path,
    redo: bool,
    log,
) -> tuple[pd.DataFrame, dict]:
    """SLOR per answer from perplexity's values (its cache: the LM runs only for texts it lacks)
    and the unigram log probability of the same tokens (metrics/slor.py)."""
    ppl, sig = perplexities(texts, config, used, ppl_key, cache_path, redo, log)
    block = {
        "perplexity_model": sig["used"],
        "revision": sig["revision"],
        "fallback_reason": sig["fallback_reason"],
        "unigram": f"wordfreq {slor.LANG} word_frequency; a word it does not list: probability 1 "
        "(no credit)",
        "words": slor.WORD.pattern,
        "per_token": "a word's ln frequency spread evenly over its LM tokens; "
        "tokens in no word 0; the first token left out, as perplexity",
        "variants": f"slor_per_word: per word with a scored token; slor_oov_floor: a word "
        f"wordfreq does not list floored at {slor.FLOOR:g}",
    }
    if sig["status"] == "missing":
        return pd.DataFrame(dict.fromkeys(slor.VARIANTS, math.nan), index=texts.index), dict(
            block, status="missing", reason=f"no perplexity model: {sig['fallback_reason']}"
        )
    from transformers import AutoConfig, AutoTokenizer

    from ..metrics.lm_nll import context_limit

    path, local = used[1], not hub.hub_reachable()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local)
    limit = context_limit(
        _Configured(AutoConfig.from_pretrained(path, local_files_only=local)), tokenizer
    )
    values = slor.slor_values(list(texts), dict(zip(texts, ppl["perplexity"])), tokenizer, limit)
    return pd.DataFrame(
        [values[t] for t in texts], index=texts.index, columns=list(slor.VARIANTS)
    ), dict(block, status="ok")


class _Configured:
    """A model's config alone: what lm_nll.context_limit reads."""

    def __init__(self, config):
        self.config = config


def embeddings(
    groups: list[list[str]], config: ScoringFile, key: dict, cache_path: Path, redo: bool, log
) -> tuple[dict | None, dict]:
    """Each distinct answer's sentence embedding (cached per text), or None with why not."""
    name = config.embedding_model
    sig = {
        "model": name,
        "revision": key.get("revision"),
        **{k: key[k] for k in ("source", "weights_sha256") if k in key},
        "batch_size": config.embedding_batch_size,
        "kernel": "cosine",
        "vendi": "exp(entropy of the eigenvalues of K / n), q = 1",
        "pairs": "all ordered pairs i != j",
    }
    cache = TextCache(cache_path, key, ["text", "embedding"], redo)
    known = {t: list(e) for t, e in zip(cache.table["text"], cache.table["embedding"])}
    wanted = sorted({t for texts in groups for t in texts} - set(known))
    if wanted:
        try:
            model = semantic.load_embedder(name)
        except semantic.EmbeddingModelUnavailable as exc:
            log(f"semantic diversity missing: {exc}")
            return None, dict(sig, status="missing", reason=str(exc))
        log(f"semantic diversity: {len(wanted):,} distinct texts with {name}")
        fresh = semantic.embed(wanted, model, config.embedding_batch_size)
        cache.add(pd.DataFrame({"text": list(fresh), "embedding": list(fresh.values())}))
        known.update(fresh)
    return known, dict(sig, status="ok")
