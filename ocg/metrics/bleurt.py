"""Pairwise BLEURT within groups (bleurt-pytorch; BLEURT-20 by default), x 100.

Distinct (reference, candidate) pairs are scored once across all groups, batched and sorted
by length. When no checkpoint can be loaded, `load_bleurt` says why and the caller records
pBLEURT as missing with that reason: never 0, never silently dropped.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import OcgFault
from .bleu import pair_weights


class BleurtUnavailable(OcgFault):
    """The BLEURT checkpoint cannot be loaded here (not cached offline, not a checkpoint)."""


def load_bleurt(checkpoint: str, device: str | None = None):
    """(tokenizer, model) or BleurtUnavailable with the reason."""
    from ..weights.hub import unavailable_reason

    reason = unavailable_reason(checkpoint)
    if reason:
        raise BleurtUnavailable(f"cannot load BLEURT checkpoint: {reason}")
    try:
        import torch

        from .bleurt_compat import import_bleurt

        bleurt_pytorch = import_bleurt()  # also on transformers 5
        tokenizer = bleurt_pytorch.BleurtTokenizer.from_pretrained(checkpoint)
        model = bleurt_pytorch.BleurtForSequenceClassification.from_pretrained(checkpoint)
    except Exception as exc:  # noqa: BLE001 - any failure to load means "missing, and why"
        raise BleurtUnavailable(
            f"cannot load BLEURT checkpoint {checkpoint!r}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        ) from exc
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return tokenizer, model.to(device).eval()


def score_pairs(
    pairs: list[tuple[str, str]], tokenizer, model, batch_size: int = 64, progress: bool = False
) -> dict[tuple[str, str], float]:
    """BLEURT x 100 of each distinct (reference, candidate) pair."""
    import torch
    from tqdm import tqdm

    unique = sorted(set(pairs), key=lambda p: (len(p[0]) + len(p[1]), p))
    out: dict[tuple[str, str], float] = {}
    device = next(model.parameters()).device
    starts = range(0, len(unique), batch_size)
    for s in tqdm(starts, desc="pBLEURT", disable=not progress):
        batch = unique[s : s + batch_size]
        refs, cands = [r for r, _ in batch], [c for _, c in batch]
        inputs = tokenizer(
            refs, cands, padding="longest", truncation=True, max_length=512, return_tensors="pt"
        )
        with torch.inference_mode():
            logits = model(**{k: v.to(device) for k, v in inputs.items()}).logits.flatten()
        out.update(zip(batch, (100.0 * logits.float().cpu().numpy()).tolist()))
    return out


def group_pairs(texts: list[str]) -> list[tuple[str, str]]:
    """The distinct (reference, candidate) pairs a group needs (identical ones included)."""
    unique, weights = pair_weights(texts)
    return [
        (unique[r], unique[h])
        for h in range(len(unique))
        for r in range(len(unique))
        if weights[h, r] > 0
    ]


def pairwise_bleurt(texts: list[str], scores: dict[tuple[str, str], float]) -> float:
    """Mean over ordered position pairs i != j of BLEURT(reference=j, candidate=i)."""
    n = len(texts)
    if n < 2:
        return float("nan")
    unique, weights = pair_weights(texts)
    total = 0.0
    for h in range(len(unique)):
        for r in range(len(unique)):
            if weights[h, r] > 0:
                total += weights[h, r] * scores[(unique[r], unique[h])]
    return total / (n * (n - 1))


def pairwise_bleurt_loop(texts: list[str], tokenizer, model) -> float:
    """Reference: every ordered pair scored on its own (for tests)."""
    n = len(texts)
    pairs = [(texts[j], texts[i]) for i in range(n) for j in range(n) if i != j]
    s = score_pairs(pairs, tokenizer, model, batch_size=1)
    return float(np.mean([s[p] for p in pairs]))
