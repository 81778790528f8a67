"""The backend a model entry names: transformers, an OpenAI-style API, or replayed answers."""

from __future__ import annotations

import pandas as pd

from ..models import ModelSpec


def make_backend(spec: ModelSpec, batch_size: int | None = None, instances: pd.DataFrame | None = None):
    """The entry's backend; the replay backend answers by instance, so it is given them."""
    if spec.backend == "replay":
        from .replay_backend import ReplayBackend
        return ReplayBackend(spec, batch_size, instances)
    if spec.backend == "openai":
        from .api_backend import OpenAIBackend
        return OpenAIBackend(spec, batch_size)
    from .hf_backend import TransformersBackend
    return TransformersBackend(spec, batch_size)
