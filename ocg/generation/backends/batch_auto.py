"""`batch_size: auto` in a models entry: the batch size a run uses, fixed once per output directory,
before its backend is built (the backend takes a number; `BatchSize.auto` says how it was found,
and the run card records it as backend.batch_size_auto).

On CUDA (transformers backend): the largest batch whose memory fits, estimated from the model's
config before any weights load: each row holds its KV cache for the longest prompt plus the
answer budget, the prefill activations of the longest prompt and a few float32 copies of the
logits; the weights' bytes come off the free memory first, and only HEADROOM of what is left is
planned on. Capped at CAP (the largest size measured on a GPU so far, notes in docs/METHODS.md).
Out-of-memory still halves the working size (transformers_backend.py), as for a fixed size.
Elsewhere (CPU, API and replay backends): CPU_DEFAULT.

The batch plan fixes batch composition, and greedy answers depend on it, so a resumed run must
form the same batches: a directory whose run card records a batch size reuses it (the size is
checked like every other setting when the entry names a number).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

CAP = 512
CPU_DEFAULT = 32  # ModelEntry's default batch size: what a CPU or an API entry with auto gets
HEADROOM = 0.8  # share of the free memory (after the weights) planned on
LOGIT_COPIES = 3  # float32 logits per row at a step: the scores, the processed scores, a copy
BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "auto": 2}
WEIGHT_BYTES = {
    "4bit": 0.5625,
    "8bit": 1.0,
}  # per parameter (NF4 with double-quant constants; int8)


def _text_config(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def kv_bytes_per_token(config, dtype_bytes: int) -> int:
    """Keys and values of one token over every layer."""
    c = _text_config(config)
    heads = c.num_attention_heads
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // heads
    kv_heads = getattr(c, "num_key_value_heads", None) or heads
    return 2 * c.num_hidden_layers * kv_heads * head_dim * dtype_bytes


def row_bytes(config, dtype_bytes: int, longest_prompt: int, max_new_tokens: int) -> int:
    """Memory one batch row needs at its peak (the estimate's unit)."""
    c = _text_config(config)
    kv = kv_bytes_per_token(config, dtype_bytes) * (longest_prompt + max_new_tokens)
    intermediate = getattr(c, "intermediate_size", None) or 4 * c.hidden_size
    prefill = longest_prompt * (4 * c.hidden_size + 3 * intermediate) * dtype_bytes
    return kv + prefill + LOGIT_COPIES * 4 * c.vocab_size


def estimate_batch_size(
    config,
    *,
    free_bytes: int,
    weight_bytes: int,
    dtype_bytes: int,
    longest_prompt: int,
    max_new_tokens: int,
) -> dict:
    """The batch size that fits, at most CAP, and the figures it came from (recorded in the run
    card)."""
    per_row = row_bytes(config, dtype_bytes, longest_prompt, max_new_tokens)
    budget = int((free_bytes - weight_bytes) * HEADROOM)
    fits = budget // per_row if budget > 0 else 0
    return {
        "batch_size": int(max(1, min(CAP, fits))),
        "free_bytes": int(free_bytes),
        "weight_bytes": int(weight_bytes),
        "row_bytes": int(per_row),
        "headroom": HEADROOM,
        "cap": CAP,
        "longest_prompt_tokens": int(longest_prompt),
        "max_new_tokens": int(max_new_tokens),
    }


def _weight_bytes(config, spec) -> int:
    """Parameters counted on the meta device (no memory) times their bytes in this entry's setting."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, trust_remote_code=spec.trust_remote_code)
    n = sum(p.numel() for p in model.parameters())
    return int(n * WEIGHT_BYTES.get(spec.quantization, BYTES[spec.dtype]))


def _cuda_estimate(spec, prompts, longest: int) -> dict:
    import torch
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(
        prompts.source, revision=prompts.revision, trust_remote_code=spec.trust_remote_code
    )
    free = sum(torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count()))
    return estimate_batch_size(
        config,
        free_bytes=free,
        weight_bytes=_weight_bytes(config, spec),
        dtype_bytes=BYTES[spec.dtype],
        longest_prompt=longest,
        max_new_tokens=spec.max_new_tokens,
    )


def recorded_batch_size(card_path: Path) -> int | None:
    """The batch size the directory's earlier run used (its run card), if any."""
    from ...records import RunCard

    if not card_path.exists():
        return None
    return RunCard.read(card_path).settings.batch_size


@dataclass(frozen=True)
class BatchSize:
    """The batch size a run plans with, and how it was found where the entry said `auto` (the
    figures of the estimate, or the resumed card's size; None: the entry or the caller named it)."""

    size: int
    auto: dict | None = None


def given_batch(spec, batch: BatchSize | int | None) -> BatchSize:
    """The batch a backend is built with: a run's, resolved once (resolve_batch_size) and passed
    in; a caller's number; or, for a backend built on an entry alone (the judge,
    ocg/scoring/judging.py), the entry's number (`auto` must be resolved before: refused)."""
    if isinstance(batch, BatchSize):
        return batch
    size = batch if batch is not None else spec.batch_size
    if size == "auto":
        raise ValueError(
            f"{spec.name}: batch_size auto reaches a backend unresolved; "
            "resolve it first (ocg/generation/backends/batch_auto.py, resolve_batch_size)"
        )
    return BatchSize(size)


def resolve_batch_size(
    spec,
    prompts,
    rendered: dict,
    card_path: Path,
    *,
    asked: int | None = None,
    device: str | None = None,
) -> BatchSize:
    """The run's batch size: `asked` (the caller's), else the entry's; its `auto` turned into a
    number (see the module's docstring) from the entry's prompt side and `rendered` prompts;
    `device`: where a transformers entry runs (None: CUDA when there is one)."""
    named = asked or spec.batch_size
    if named != "auto":
        return BatchSize(named)
    resumed = recorded_batch_size(card_path)
    how: dict[str, Any]
    if resumed is not None:
        how = {
            "batch_size": resumed,
            "source": "resumed: the size the directory's run card records",
        }
    elif spec.backend == "transformers" and _on_cuda(device):
        longest = max(prompts.prompt_lengths(list(rendered.values())), default=1)
        how = {
            **_cuda_estimate(spec, prompts, longest),
            "source": "estimate: free CUDA memory and the model's config",
        }
    else:
        how = {"batch_size": CPU_DEFAULT, "source": f"fixed default off CUDA ({CPU_DEFAULT})"}
    return BatchSize(how["batch_size"], how)


def _on_cuda(device: str | None) -> bool:
    if device is None:
        from .transformers_loading import default_device

        device = default_device()
    return device == "cuda"
