"""Perplexity of each answer with lmppl (GPT2-XL in the paper), guarded for this environment.

- lmppl puts all texts in one batch unless told: the batch size is always explicit.
- Right padding (left padding gives wrong batched values in lmppl: no position ids).
- A text of fewer than 2 tokens cannot be scored (lmppl divides by zero): NaN, status
  "too_short"; an empty or missing answer: NaN, "empty". Longer texts are truncated to the
  model's context length, status "truncated".
- lmppl checks connectivity by opening http://google.com with no timeout; that check is
  replaced by a 3-second probe of the model hub so scoring never hangs on a dead network.
- The configured model (gpt2-xl) is used when it is in the local cache or the hub answers;
  otherwise the fallback, if the scoring settings choose one (the demo chooses the embedded
  SmolLM2), is used and the reason recorded; without a fallback perplexity is missing, with
  the reason, and a later scoring retries it.
"""

from __future__ import annotations

import math
import os

from ..embedded import EMBEDDED_PREFIX, ensure_converted
from ..hub import hub_reachable, unavailable_reason


class PerplexityModelUnavailable(RuntimeError):
    """The configured model cannot be loaded here and no fallback was chosen."""


def resolve_model(model: str, fallback: str | None) -> tuple[str, str, str | None]:
    """(name used, path or hub id to load, reason for falling back or None)."""
    def path_of(name):
        return str(ensure_converted(name[len(EMBEDDED_PREFIX):])) if name.startswith(EMBEDDED_PREFIX) else name
    if model.startswith(EMBEDDED_PREFIX):
        return model, path_of(model), None
    reason = unavailable_reason(model)
    if reason is None:
        return model, model, None
    if not fallback:
        raise PerplexityModelUnavailable(f"perplexity model: {reason}; no perplexity_fallback chosen")
    return fallback, path_of(fallback), f"{reason}; used {fallback}"


def load_lm(path: str):
    """An lmppl.LM with the guards above."""
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "TOKENIZERS_PARALLELISM")}
    import lmppl
    import lmppl.ppl_recurrent_lm as recurrent
    for k, v in saved.items():  # lmppl overrides these for every child process at import
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    recurrent.internet_connection = lambda host=None: hub_reachable()
    import torch
    lm = lmppl.LM(path, num_gpus=1 if torch.cuda.is_available() else 0, trust_remote_code=False)
    lm.tokenizer.padding_side = "right"
    limit = getattr(lm.model.config, "max_position_embeddings", None) or getattr(lm.model.config, "n_positions", 1024)
    lm.tokenizer.model_max_length = min(int(limit), lm.tokenizer.model_max_length or int(limit))
    return lm


def score_perplexity(texts: list, lm, batch_size: int = 32) -> tuple[dict[str, float], dict[str, str]]:
    """Perplexity and status of each distinct text."""
    unique = list(dict.fromkeys(t if isinstance(t, str) else "" for t in texts))
    ppl: dict[str, float] = {}
    status: dict[str, str] = {}
    lengths = {t: len(lm.tokenizer(t, add_special_tokens=True)["input_ids"]) if t.strip() else 0
               for t in unique}
    limit = lm.tokenizer.model_max_length
    scorable = []
    for t in unique:
        if not t.strip():
            ppl[t], status[t] = math.nan, "empty"
        elif lengths[t] < 2:
            ppl[t], status[t] = math.nan, "too_short"
        else:
            status[t] = "truncated" if lengths[t] > limit else "ok"
            scorable.append(t)
    scorable.sort(key=lambda t: (lengths[t], t))  # similar lengths per batch: less padding
    if scorable:
        values = lm.get_perplexity(scorable, batch_size=batch_size)
        ppl.update(zip(scorable, values))
    return ppl, status
