"""A model entry's batch_size travels one way, from the models file to the backend: validated
once (the entry's class), resolved once (batch_auto.resolve_batch_size), passed once (the
backend's constructor), never read back from the entry after."""

from pathlib import Path

import pytest

from ocg.config.model_registry import parse_models
from ocg.core.layout import ModelGenerations
from ocg.generation import generate
from ocg.generation.backends import batch_auto
from ocg.records import RunCard

ENTRY = {"backend": "replay", "id": "x", "replay": {"rates": {"drop": 0.1}}}


@pytest.mark.parametrize("size, want", [(5, 5), ("auto", batch_auto.CPU_DEFAULT)])
def test_an_entrys_batch_size_reaches_the_backend_resolved_once(
    tmp_path: Path, monkeypatch, size, want
):
    spec = parse_models({"models": {"m": {**ENTRY, "batch_size": size}}}, "f")["m"]
    calls = []
    resolve = batch_auto.resolve_batch_size

    def counted(*args, **kwargs):
        calls.append(args[0].name)
        return resolve(*args, **kwargs)

    monkeypatch.setattr("ocg.generation.run_generation.resolve_batch_size", counted)
    given = batch_auto.given_batch
    seen = []

    def no_reading_back(spec_, batch):
        seen.append(batch)
        return given(spec_, batch)

    for module in ("replay_backend", "transformers_backend", "openai_backend"):
        monkeypatch.setattr(f"ocg.generation.backends.{module}.given_batch", no_reading_back)
    out = tmp_path / "m"
    generate(spec, subset_k=2, out_dir=out, conditions=["original"])
    assert calls == ["m"]  # resolved once
    assert len(seen) == 1 and isinstance(seen[0], batch_auto.BatchSize)  # passed resolved
    assert seen[0].size == want
    card = RunCard.read(ModelGenerations(out / "m").run_card)
    assert card.settings.batch_size == want
