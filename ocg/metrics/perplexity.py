"""Perplexity of each answer (GPT2-XL in the paper), guarded for this environment.

Two implementations, the same definition: exp of the mean token NLL over the tokens after the
first, texts batched with right padding, the attention mask respected, in batches of at most
`batch_size` texts and lm_nll.TOKEN_BUDGET padded tokens (`plan_batches`: a long text alone).
- lmppl (the paper's tool) where it runs: transformers 4.x with lmppl importable. Its batch
  size is always explicit (it puts all texts in one batch unless told); right padding (left
  padding gives wrong batched values in lmppl: no position ids); its connectivity check (an
  open of http://google.com with no timeout) is replaced by a 3-second probe of the model hub.
- ocg's own (`compute_perplexity`, in metrics/lm_nll.py) elsewhere: lmppl's model load fails on
  transformers 5 (`use_auth_token`). `implementation()` says which one scores; the family's key
  and signature carry it, so values of the two are never mixed silently.
Guards for both: a text of fewer than 2 tokens cannot be scored: NaN, status "too_short"; an
empty or missing answer: NaN, "empty"; a longer text than the model's context is truncated to
it, status "truncated".
The configured model (gpt2-xl) is used when it is in the local cache or the hub answers;
otherwise the fallback, if the scoring settings choose one (the demo chooses the embedded
SmolLM2), is used and the reason recorded; without a fallback perplexity is missing, with the
reason, and a later scoring retries it.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import metadata

from ..core.errors import OcgFault
from ..weights.embedded import EMBEDDED_PREFIX, ensure_converted
from ..weights.hub import hub_reachable, unavailable_reason
from .lm_nll import TOKEN_BUDGET, OcgLM, compute_perplexity, context_limit, guarded, load_ocg_lm

__all__ = [
    "TOKEN_BUDGET",
    "OcgLM",
    "PerplexityModelUnavailable",
    "compute_perplexity",
    "implementation",
    "load_lm",
    "resolve_model",
    "score_perplexity",
]


class PerplexityModelUnavailable(OcgFault):
    """The configured model cannot be loaded here and no fallback was chosen."""


def implementation() -> str:
    """ "lmppl" where it runs (transformers 4.x, lmppl importable), else "ocg" (lm_nll.py)."""
    try:
        major = int(metadata.version("transformers").split(".")[0])
    except metadata.PackageNotFoundError:
        major = 0
    return "lmppl" if major < 5 and importlib.util.find_spec("lmppl") is not None else "ocg"


def resolve_model(model: str, fallback: str | None) -> tuple[str, str, str | None]:
    """(name used, path or hub id to load, reason for falling back or None)."""

    def path_of(name):
        return (
            str(ensure_converted(name[len(EMBEDDED_PREFIX) :]))
            if name.startswith(EMBEDDED_PREFIX)
            else name
        )

    if model.startswith(EMBEDDED_PREFIX):
        return model, path_of(model), None
    reason = unavailable_reason(model)
    if reason is None:
        return model, model, None
    if not fallback:
        raise PerplexityModelUnavailable(
            f"perplexity model: {reason}; no perplexity_fallback chosen"
        )
    return fallback, path_of(fallback), f"{reason}; used {fallback}"


def load_lm(path: str, impl: str | None = None):
    """The scorer of `implementation()` (or `impl`): an lmppl.LM with the guards above, or an OcgLM."""
    import torch

    if (impl or implementation()) == "ocg":
        return load_ocg_lm(
            path,
            "cuda" if torch.cuda.is_available() else "cpu",
            local_files_only=not hub_reachable(),
        )
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "TOKENIZERS_PARALLELISM")}
    import lmppl
    import lmppl.ppl_recurrent_lm as recurrent

    for k, v in saved.items():  # lmppl overrides these for every child process at import
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    recurrent.internet_connection = lambda host=None: hub_reachable()
    lm = lmppl.LM(path, num_gpus=1 if torch.cuda.is_available() else 0, trust_remote_code=False)
    lm.tokenizer.padding_side = "right"
    lm.tokenizer.model_max_length = context_limit(lm.model, lm.tokenizer)
    return lm


def score_perplexity(
    texts: list, lm, batch_size: int = 32
) -> tuple[dict[str, float], dict[str, str]]:
    """Perplexity and status of each distinct text, with the scorer `load_lm` gave."""
    if isinstance(lm, OcgLM):
        return compute_perplexity(texts, lm.model, lm.tokenizer, batch_size, lm.device)
    return guarded(
        texts,
        lm.tokenizer,
        lm.tokenizer.model_max_length,
        lambda batch: lm.get_perplexity(batch, batch_size=len(batch)),
        batch_size,
    )
