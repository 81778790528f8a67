"""Reading scored results: every model's answers, groups and summary as pandas frames.

`load_scores` is what the analysis notebooks (and a researcher in JupyterLab) call. It refuses
to put side by side models whose scores were computed differently (another matching rule, spaCy
model, perplexity model, a metric missing for one of them...) unless `allow_mixed=True`; then
each table row carries a `scoring_signature` and `mixed_scoring` says what differs. An
unfinished score set (ocg/scoring/scoreset.py) is refused, naming its folder.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from .errors import OcgInputError
from .paths import scores_dir
from .scoring.scoreset import holds_scores, read_score_set

TABLES = ("answers", "groups", "summary")


def comparable_signature(signature: dict) -> dict:
    """What must agree between two models for their numbers to sit in one table."""
    keys = {m: {k: v for k, v in key.items() if k != "inputs_sha256"}
            for m, key in signature.get("metric_keys", {}).items()}
    status = {m: signature[m].get("status", "ok") for m in keys if isinstance(signature.get(m), dict)}
    return {"metric_keys": keys, "status": status}


def _short_hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def scoring_differences(signatures: dict[str, dict]) -> list[str]:
    """Human-readable lines naming models and the fields in which their scoring differs."""
    comparable = {m: comparable_signature(s) for m, s in signatures.items()}
    if len({_short_hash(c) for c in comparable.values()}) <= 1:
        return []
    lines = []
    fields = sorted({(section, metric, k) for c in comparable.values() for section in ("metric_keys",)
                     for metric, key in c[section].items() for k in key}
                    | {("status", m, "status") for c in comparable.values() for m in c["status"]})
    for section, metric, k in fields:
        values = {}
        for model, c in comparable.items():
            v = c[section].get(metric, {}).get(k, "(not scored)") if section == "metric_keys" else \
                c["status"].get(metric, "(not scored)")
            values.setdefault(json.dumps(v, sort_keys=True, default=str), []).append(model)
        if len(values) > 1:
            parts = "; ".join(f"{', '.join(models)}: {v}" for v, models in values.items())
            lines.append(f"{metric}.{k} differs: {parts}")
    return lines


def load_scores(scores_root: str | Path | None = None, models: list[str] | None = None,
                allow_mixed: bool = False, tables: tuple[str, ...] = TABLES) -> dict:
    """answers, groups and summary of the scored models (or only the `tables` named),
    concatenated; and their signatures."""
    root = Path(scores_root or scores_dir())
    dirs = sorted(p for p in root.iterdir() if holds_scores(p)) if root.is_dir() else []
    if models is not None:
        if isinstance(models, str) or not all(isinstance(m, str) for m in models):
            raise OcgInputError("models", f"got {models!r}; expected a list of model names")
        found = {p.name for p in dirs}
        missing = [m for m in models if m not in found]
        if missing:
            raise OcgInputError(str(root), f"no scores for {missing} (scored here: {sorted(found) or 'none'}); "
                                           "run 02_score for them first")
        dirs = [p for p in dirs if p.name in models]
    if not dirs:
        raise OcgInputError(str(root), "no scored models here; run 02_score first")
    sets = {p.name: read_score_set(p, tables) for p in dirs}  # each checked against its signature
    signatures = {m: {k: v for k, v in sig.items() if k != "config"} for m, (sig, _) in sets.items()}
    differences = scoring_differences(signatures)
    if differences and not allow_mixed:
        raise OcgInputError(str(root), "these models were scored differently and cannot share a "
                                       "table:\n  " + "\n  ".join(differences) +
                            "\nrescore them alike (02_score), or pass allow_mixed=True to show them "
                            "with a banner and a scoring_signature column")
    out = {}
    for table in tables:
        frames = []
        for p in dirs:
            df = sets[p.name][1][table]
            if differences:
                df["scoring_signature"] = _short_hash(comparable_signature(signatures[p.name]))
            frames.append(df)
        out[table] = pd.concat(frames, ignore_index=True)
    out["signatures"] = signatures
    out["mixed_scoring"] = differences
    return out
