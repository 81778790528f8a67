"""The backends a model entry names, by its class: transformers, an OpenAI-style API, or replayed
answers. Each entry class of ocg/config/models_file.py (ENTRY_CLASSES, keyed by its `backend`
literal) is paired here with its backend class; adding one is an entry class there and a line here.

Every backend keeps the contract of protocol.py (`Backend`) and takes `(spec, batch, *, sampling,
grammars, prompts, instances)`, built complete: nothing is set on it afterwards. It names its
prompt side (`prompts_for`, built from the entry before the backend: the rendered prompts come
first, then the batch size, resolved once, then the backend), and its `generate(prompts,
instance_ids, sample=s)` draws sample s (ocg/generation/sampling.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...config.models_file import ENTRY_CLASSES, ModelEntry
from .batch_auto import BatchSize
from .openai_backend import OpenAIBackend
from .protocol import Backend
from .replay_backend import ReplayBackend
from .transformers_backend import TransformersBackend

_: type[Backend]  # each class keeps the contract (checked by mypy)
_ = TransformersBackend
_ = OpenAIBackend
_ = ReplayBackend

_BY_ENTRY: dict[type, type[TransformersBackend | OpenAIBackend | ReplayBackend]] = {
    ENTRY_CLASSES["transformers"]: TransformersBackend,
    ENTRY_CLASSES["openai"]: OpenAIBackend,
    ENTRY_CLASSES["replay"]: ReplayBackend,
}
BACKENDS: dict[str, type[TransformersBackend | OpenAIBackend | ReplayBackend]] = {
    name: _BY_ENTRY[entry] for name, entry in ENTRY_CLASSES.items()
}
"""Each `backend:` name's class (the names are the entry classes' keys)."""

__all__ = ["BACKENDS", "Backend", "backend_class", "make_backend", "make_prompts"]


def backend_class(spec: ModelEntry) -> type[TransformersBackend | OpenAIBackend | ReplayBackend]:
    """The class of the backend the entry names."""
    return BACKENDS[spec.backend]


def make_prompts(spec: ModelEntry) -> Any:
    """The entry's prompt side (a tokenizer for transformers; chat messages otherwise): it
    renders and measures prompts before any backend exists."""
    return backend_class(spec).prompts_for(spec)


def make_backend(
    spec: ModelEntry,
    batch: BatchSize,
    instances: pd.DataFrame | None = None,
    sampling: dict | None = None,
    prompts: Any = None,
    *,
    grammars: Mapping[str, str] | None = None,
) -> Backend:
    """The entry's backend, complete, at the run's batch size (resolved once before:
    batch_auto.resolve_batch_size); the replay backend answers by instance, so it is given them.
    `sampling` (temperature, top_p; None: the entry's own decoding) is the run's, not the
    entry's; `grammars`: instance id -> the expression its answer is forced to."""
    return backend_class(spec)(
        spec, batch, sampling=sampling, grammars=grammars, prompts=prompts, instances=instances
    )
