"""A run card is written once per change of the run's state, and a card once written is never
changed after: every card written still reads as it was written, and what is on
disk is the last one (replay backend: no model)."""

import json

import pytest

from ocg.generation import generate
from ocg.records import RunCard


@pytest.fixture
def models_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  synth: {backend: replay, id: x/y, batch_size: 16}\n")
    return path


@pytest.fixture
def writes(monkeypatch):
    """Each card RunCard.write writes: (the card, its JSON as written)."""
    seen, write = [], RunCard.write

    def spy(card, path):
        seen.append((card, json.dumps(card.to_json())))
        return write(card, path)

    monkeypatch.setattr(RunCard, "write", spy)
    return seen


def run(models_file, out):
    return generate(
        "synth",
        out_dir=out,
        models_file=models_file,
        progress=False,
        conditions=["ordered"],
        subset_k=1,
    )


def test_each_card_written_stays_as_written_and_each_write_is_a_change(
    models_file, tmp_path, writes
):
    folder = run(models_file, tmp_path)
    assert [json.dumps(card.to_json()) for card, _ in writes] == [text for _, text in writes]
    cards = [json.loads(text) for _, text in writes]
    assert len(cards) == 2 and cards[0] != cards[1]  # the run started, the run ended
    assert [c["status"] for c in cards] == ["running", "complete"]
    assert [c["runs"][-1]["status"] for c in cards] == ["running", "complete"]
    assert "written" not in cards[0]["runs"][-1] and cards[1]["runs"][-1]["written"] == 144
    assert json.loads((folder / "run_card.json").read_text()) == cards[-1]

    writes.clear()  # nothing left to do: one write, saying so
    run(models_file, tmp_path)
    assert len(writes) == 1 and json.loads(writes[0][1])["status"] == "complete"
    assert json.loads(writes[0][1])["checked_utc"]


def test_a_failed_run_writes_its_end_and_leaves_the_started_card_as_it_was(
    models_file, tmp_path, writes, monkeypatch
):
    import ocg.generation.answering as answering

    def stop(where):
        raise RuntimeError(f"stopped at {where}")

    monkeypatch.setattr(answering, "check_stop", stop)
    with pytest.raises(RuntimeError, match="stopped at synth ordered batch 0"):
        run(models_file, tmp_path)
    started = writes[-1][0]
    assert started.status == "running" and started.runs[-1].status == "running"
    card = json.loads((tmp_path / "synth" / "run_card.json").read_text())
    assert card["status"] == "failed" and card["runs"][-1]["status"] == "failed"
    assert card["runs"][-1]["error"] == "RuntimeError: stopped at synth ordered batch 0"
