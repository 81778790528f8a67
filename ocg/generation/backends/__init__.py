"""The backends a model entry names, by name: transformers, an OpenAI-style API, or replayed
answers. A backend is a class in BACKENDS; adding one is a line here (and its name in the
models file's vocabulary, ocg/config/models_file.py's BACKENDS, which the schema lists).

Every backend class takes `(spec, batch_size, *, batch_auto, prompts, instances)` and names its
prompt side (`prompts_for`, built from the entry before the backend: the rendered prompts come
first, then the batch size, then the backend), and its `generate(prompts, instance_ids,
sample=s)` draws sample s (ocg/generation/sampling.py).
"""

from __future__ import annotations

import pandas as pd

from ...config.models_file import ModelEntry
from .batch_auto import BatchSize
from .openai_backend import OpenAIBackend
from .replay_backend import ReplayBackend
from .transformers_backend import TransformersBackend

BACKENDS: dict[str, type] = {
    "transformers": TransformersBackend,
    "openai": OpenAIBackend,
    "replay": ReplayBackend,
}


def backend_class(spec: ModelEntry) -> type:
    """The class of the backend the entry names."""
    return BACKENDS[spec.backend]


def make_prompts(spec: ModelEntry):
    """The entry's prompt side (a tokenizer for transformers; chat messages otherwise): it
    renders and measures prompts before any backend exists."""
    return backend_class(spec).prompts_for(spec)


def make_backend(
    spec: ModelEntry,
    batch: BatchSize | None = None,
    instances: pd.DataFrame | None = None,
    sampling: dict | None = None,
    prompts=None,
):
    """The entry's backend at a resolved batch size (`batch`: None, the entry's own number);
    the replay backend answers by instance, so it is given them. `sampling` (temperature,
    top_p; None: the entry's own decoding) is the run's, not the entry's."""
    batch = batch or BatchSize(spec.batch_size)
    backend = backend_class(spec)(
        spec, batch.size, batch_auto=batch.auto, prompts=prompts, instances=instances
    )
    backend.sampling = sampling
    return backend
