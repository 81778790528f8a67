"""ocg's own perplexity: exp of the mean token NLL over the tokens after the first.

Used where lmppl cannot run (transformers 5; metrics/perplexity.py chooses). Texts are
tokenized with the model's special tokens, truncated to its context, padded on the right by
hand (no pad token is added to the tokenizer or the model) and batched; padded positions are
masked out of the attention and of the loss, so a text's value does not depend on its batch.
The loss is taken in float32 whatever the model's dtype (bf16 on a GPU). Imports only torch
(lazily): benchmarks/gpu_check.py uses it on a machine with torch and transformers alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class OcgLM:
    """A causal LM and its tokenizer, loaded for `compute_perplexity`."""

    model: object
    tokenizer: object
    device: str

    @property
    def config(self):
        return self.model.config


def context_limit(model, tokenizer) -> int:
    """The longest text the model takes: its positions, or the tokenizer's limit if smaller."""
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(
        model.config, "n_positions", 1024
    )
    return min(int(limit), tokenizer.model_max_length or int(limit))


def load_ocg_lm(path: str, device: str, local_files_only: bool = False, dtype=None) -> OcgLM:
    """Tokenizer and model (float32 unless told: both transformers 4 and 5 load the same)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
    model = AutoModelForCausalLM.from_pretrained(
        path, local_files_only=local_files_only, dtype=dtype or torch.float32
    )
    return OcgLM(model.to(device).eval(), tokenizer, device)


def guarded(
    texts: list, tokenizer, limit: int, values: Callable[[list[str]], list[float]]
) -> tuple[dict[str, float], dict[str, str]]:
    """Perplexity and status of each distinct text; `values` scores the scorable ones, sorted by
    length (similar lengths per batch: less padding)."""
    unique = list(dict.fromkeys(t if isinstance(t, str) else "" for t in texts))
    ppl: dict[str, float] = {}
    status: dict[str, str] = {}
    lengths = {
        t: len(tokenizer(t, add_special_tokens=True)["input_ids"]) if t.strip() else 0
        for t in unique
    }
    scorable = []
    for t in unique:
        if not t.strip():
            ppl[t], status[t] = math.nan, "empty"
        elif lengths[t] < 2:
            ppl[t], status[t] = math.nan, "too_short"
        else:
            status[t] = "truncated" if lengths[t] > limit else "ok"
            scorable.append(t)
    scorable.sort(key=lambda t: (lengths[t], t))
    if scorable:
        ppl.update(zip(scorable, values(scorable)))
    return ppl, status


def batch_nll(texts: list[str], model, tokenizer, device, limit: int) -> list[float]:
    """Mean NLL per text over its tokens after the first, in one right-padded batch."""
    import torch

    ids = [
        tokenizer(t, add_special_tokens=True, truncation=True, max_length=limit)["input_ids"]
        for t in texts
    ]
    width = max(len(i) for i in ids)
    pad = (
        tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    )  # masked: any id will do
    input_ids = torch.tensor([i + [pad] * (width - len(i)) for i in ids], device=device)
    mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i in ids], device=device)
    with torch.inference_mode():
        logits = model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float()
    # flat (tokens, vocab): the (batch, vocab, tokens) form is off by ~1e-4 on the CPU (torch 2.x)
    nll = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), input_ids[:, 1:].reshape(-1), reduction="none"
    ).view(len(ids), -1)
    counted = mask[:, 1:].to(nll.dtype)
    return ((nll * counted).sum(dim=1) / counted.sum(dim=1)).cpu().tolist()


def compute_perplexity(
    texts: list, model, tokenizer, batch_size: int = 32, device=None
) -> tuple[dict[str, float], dict[str, str]]:
    """Perplexity and status ("ok", "truncated", "too_short", "empty") of each distinct text,
    with an already-loaded causal LM and its tokenizer."""
    device = device or next(model.parameters()).device
    limit = context_limit(model, tokenizer)

    def values(scorable: list[str]) -> list[float]:
        nll = []
        for s in range(0, len(scorable), batch_size):
            nll += batch_nll(scorable[s : s + batch_size], model, tokenizer, device, limit)
        return [math.exp(v) for v in nll]

    return guarded(texts, tokenizer, limit, values)
