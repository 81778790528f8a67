"""Every shipped models file's entries, as a run card records them, byte for byte as before the
entries became one class per backend (tests/fixtures/models_recorded/recorded.json, written from
the tree before that change): a run card's `spec` must not move, or resumes are refused."""

import json
from pathlib import Path

import pytest

from ocg.config.model_registry import load_models
from ocg.config.models_file import OpenAIEntry, ReplayEntry, TransformersEntry

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/fixtures/models_recorded/recorded.json"
FROZEN = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("path", sorted(FROZEN))
def test_every_entry_is_recorded_as_before(path):
    got = {name: entry.recorded() for name, entry in load_models(ROOT / path).items()}
    assert json.dumps(got) == json.dumps(FROZEN[path])  # key order too


def test_the_shipped_files_are_all_frozen():
    assert {f"params/{p.name}" for p in (ROOT / "params").glob("*models.yaml")} <= set(FROZEN)


def test_each_backend_loads_as_its_own_class():
    entries = load_models(ROOT / "tests/fixtures/models_recorded/traps.yaml")
    assert type(entries["local"]) is TransformersEntry
    assert type(entries["api"]) is OpenAIEntry
    assert type(entries["replayed"]) is ReplayEntry
    # the file's defaults do not reach an openai or replay entry's own defaults
    assert (entries["api"].quantization, entries["api"].batch_check) == ("none", 0)
    assert entries["api-plain"].batch_check == 2 and entries["replayed"].batch_check == 0
