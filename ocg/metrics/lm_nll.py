"""ocg's own perplexity: exp of the mean token NLL over the tokens after the first.

Used where lmppl cannot run (transformers 5; metrics/perplexity.py chooses). Texts are
tokenized with the model's special tokens, truncated to its context, padded on the right by
hand (no pad token is added to the tokenizer or the model) and batched; padded positions are
masked out of the attention and of the loss, so a text's value does not depend on its batch.
Batches (`plan_batches`, used by lmppl's path too) hold texts sorted by length, at most
`batch_size` of them and at most TOKEN_BUDGET padded tokens (rows x the longest), a longer text
alone: one long answer costs its own length, not its length times the batch. The loss is taken
in float32 whatever the model's dtype (bf16 on a GPU), LOSS_ROWS positions at a time (each
position's loss is its own: the slices give the values of one piece, bit for bit; tested). For a
plain causal LM (its logits are its output layer on its base model's last hidden state: checked on
a probe, `output_layer`) the output layer too runs LOSS_ROWS positions at a time, so no batch holds
the whole (tokens x vocabulary) logits: a context-length answer cost 1.5 GB of float32 logits
before. A model that changes its logits after that layer (soft-capping, a logit scale) is run whole.
Imports only torch (lazily): benchmarks/gpu_check.py uses it on a machine with torch and
transformers alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

TOKEN_BUDGET = 4096  # padded tokens per batch; 32 answers of up to 128 tokens batch as before
LOSS_ROWS = 1024  # positions per slice of the loss: a long text's log-softmax is no second logits


@dataclass
class OcgLM:
    """A causal LM and its tokenizer, loaded for `compute_perplexity`."""

    model: object
    tokenizer: object
    device: str

    @property
    def config(self):
        return self.model.config  # type: ignore[attr-defined]  # model is a transformers model; hashed file: field stays `object`


def context_limit(model, tokenizer) -> int:
    """The longest text the model takes: its positions, or the tokenizer's limit if smaller."""
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(
        model.config, "n_positions", 1024
    )
    return min(int(limit), tokenizer.model_max_length or int(limit))  # type: ignore[arg-type]  # a causal LM's config has one of the two


def load_ocg_lm(path: str, device: str, local_files_only: bool = False, dtype=None) -> OcgLM:
    """Tokenizer and model (float32 unless told: both transformers 4 and 5 load the same)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
    model = AutoModelForCausalLM.from_pretrained(
        path, local_files_only=local_files_only, dtype=dtype or torch.float32
    )
    return OcgLM(model.to(device).eval(), tokenizer, device)  # type: ignore[arg-type]  # transformers' stubs for .to() on from_pretrained's result are wrong


def plan_batches(lengths: list[int], batch_size: int, budget: int | None = None) -> list[range]:
    """Consecutive slices of texts sorted by (truncated) length: at most `batch_size` rows and at
    most `budget` (TOKEN_BUDGET) padded tokens (rows x the slice's longest), a longer text alone."""
    budget = budget or TOKEN_BUDGET
    plan, start = [], 0
    for i, n in enumerate(lengths):
        rows = i - start + 1
        if i > start and (rows > batch_size or rows * n > budget):
            plan.append(range(start, i))
            start = i
    if lengths:
        plan.append(range(start, len(lengths)))
    return plan


def guarded(
    texts: list,
    tokenizer,
    limit: int,
    values: Callable[[list[str]], list[float]],
    batch_size: int | None = None,
) -> tuple[dict[str, float], dict[str, str]]:
    """Perplexity and status of each distinct text; `values` scores the scorable ones, sorted by
    length (similar lengths per batch: less padding), one batch of `plan_batches` per call when a
    `batch_size` is given (else all in one call)."""
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
    sizes = [min(lengths[t], limit) for t in scorable]
    plan = plan_batches(sizes, batch_size) if batch_size else [range(len(scorable))]
    for batch in plan:
        if batch:
            chunk = scorable[batch.start : batch.stop]
            ppl.update(zip(chunk, values(chunk)))
    return ppl, status


def output_layer(model, input_ids, mask):
    """(base model, output layer) when the model's logits are exactly its output layer applied to
    its base model's last hidden state, checked bit for bit on the batch's first row (at most 8
    tokens); else None (the logits are then taken whole)."""
    import torch

    base, head = getattr(model, "base_model", None), model.get_output_embeddings()
    if base is None or base is model or head is None:
        return None
    probe, probe_mask = input_ids[:1, :8], mask[:1, :8]
    whole = model(input_ids=probe, attention_mask=probe_mask, use_cache=False).logits
    parts = head(
        base(input_ids=probe, attention_mask=probe_mask, use_cache=False).last_hidden_state
    )
    return (base, head) if torch.equal(whole, parts) else None


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
    labels = input_ids[:, 1:].reshape(-1)
    with torch.inference_mode():
        layer = output_layer(model, input_ids, mask)
        if layer is None:
            logits = model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits[:, :-1]
            rows = logits.reshape(-1, logits.shape[-1])
        else:
            base, head = layer
            hidden = base(
                input_ids=input_ids, attention_mask=mask, use_cache=False
            ).last_hidden_state[:, :-1]
            rows = hidden.reshape(-1, hidden.shape[-1])
        # flat (tokens, vocab): the (batch, vocab, tokens) form is off by ~1e-4 on the CPU (torch
        # 2.x); in slices of LOSS_ROWS rows (each row's loss is its own: slicing changes no value)
        nll = torch.cat(
            [
                torch.nn.functional.cross_entropy(
                    (
                        rows[s : s + LOSS_ROWS] if layer is None else head(rows[s : s + LOSS_ROWS])
                    ).float(),
                    labels[s : s + LOSS_ROWS],
                    reduction="none",
                )
                for s in range(0, rows.shape[0], LOSS_ROWS)
            ]
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

    def values(batch: list[str]) -> list[float]:
        return [math.exp(v) for v in batch_nll(batch, model, tokenizer, device, limit)]

    return guarded(texts, tokenizer, limit, values, batch_size)
