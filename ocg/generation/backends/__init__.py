"""The backend a model entry names: transformers, an OpenAI-style API, or replayed answers."""

from __future__ import annotations

import pandas as pd

from ...config.model_registry import ModelSpec


def make_backend(
    spec: ModelSpec,
    batch_size: int | None = None,
    instances: pd.DataFrame | None = None,
    sampling: dict | None = None,
):
    """The entry's backend; the replay backend answers by instance, so it is given them.
    `sampling` (temperature, top_p; None: the entry's own decoding) is the run's, not the entry's.
    Every backend's `generate(prompts, instance_ids, sample=s)` draws sample s (sampling.py)."""
    if spec.backend == "replay":
        from .replay_backend import ReplayBackend

        backend = ReplayBackend(spec, batch_size, instances)
    elif spec.backend == "openai":
        from .openai_backend import OpenAIBackend

        backend = OpenAIBackend(spec, batch_size)
    else:
        from .transformers_backend import TransformersBackend

        backend = TransformersBackend(spec, batch_size)
    backend.sampling = sampling
    return backend
