"""Answer extraction rules (SPEC 2), the crash-safe store, and the batch plan."""

import json
import random

import pytest

from ocg.errors import OcgInputError
from ocg.generation import GenerationStore, extract_answer, plan_batches
from ocg.generation.extraction import prompt_opens_think


@pytest.mark.parametrize("raw, rule, expected", [
    ("  The dog runs. \n", "plain", ("The dog runs.", "ok")),
    ("   ", "plain", ("", "empty")),
    ("<think>order: dog then run</think>\nThe dog runs.", "think", ("The dog runs.", "ok")),
    ("<think>a</think>x<think>b</think> Final one.", "think", ("Final one.", "ok")),
    ("<think>still thinking about dogs", "think", (None, "unclosed_think")),
    ("The dog runs.", "think", ("The dog runs.", "ok")),
    ("<Thought>hmm</Thought><Output>First.</Output><Output>The dog runs.</Output>", "marco_o1",
     ("The dog runs.", "ok")),
    ("<Thought>hmm</Thought>\n<Output>\nThe dog runs.", "marco_o1", ("The dog runs.", "ok")),
    ("<Thought>I never answer", "marco_o1", (None, "no_output")),
    ("Plain sentence.", "marco_o1", ("Plain sentence.", "ok")),
])
def test_extraction_rules(raw, rule, expected):
    assert extract_answer(raw, rule) == expected


def test_think_opened_by_the_prompt():
    prompt = "<|User|>Concepts...<|Assistant|><think>\n"
    assert prompt_opens_think(prompt)
    assert extract_answer("I am thinking and run out of tokens", "think", True) == (None, "unclosed_think")
    assert extract_answer("reasoning</think>The dog runs.", "think", True) == ("The dog runs.", "ok")


def rec(i):
    return {"instance_id": f"id{i}", "answer": f"answer {i}"}


def test_store_appends_once_and_survives_a_torn_tail(tmp_path):
    path = tmp_path / "ordered.jsonl"
    store = GenerationStore(path)
    assert store.append([rec(0), rec(1)]) == 2
    assert store.append([rec(1), rec(2)]) == 1  # id1 is never written twice
    with path.open("ab") as fh:
        fh.write(b'{"instance_id": "id3", "answ')  # killed mid-write
    reopened = GenerationStore(path)
    assert reopened.repaired_bytes == len(b'{"instance_id": "id3", "answ')
    assert reopened.done == {"id0", "id1", "id2"}
    assert [r["instance_id"] for r in reopened.records()] == ["id0", "id1", "id2"]
    assert reopened.append([rec(3)]) == 1
    assert path.read_text().count("\n") == 4


def test_store_refuses_corruption_in_the_middle(tmp_path):
    path = tmp_path / "ordered.jsonl"
    path.write_text(json.dumps(rec(0)) + "\nnot json\n" + json.dumps(rec(1)) + "\n")
    with pytest.raises(OcgInputError, match=rf"{path}:2: malformed record"):
        GenerationStore(path)


def test_store_refuses_duplicate_ids(tmp_path):
    path = tmp_path / "ordered.jsonl"
    path.write_text(json.dumps(rec(0)) + "\n" + json.dumps(rec(0)) + "\n")
    with pytest.raises(OcgInputError, match=rf"{path}:2: instance id0 written twice"):
        GenerationStore(path)


def test_batch_plan_is_fixed_by_the_instance_list():
    ids = [f"i{k:02d}" for k in range(23)]
    lengths = [random.Random(k).randint(10, 20) for k in range(23)]
    plan = plan_batches(ids, lengths, 5)
    assert [len(b) for b in plan] == [5, 5, 5, 5, 3]
    batches = [[ids[p] for p in b] for b in plan]
    flat_lengths = [lengths[ids.index(i)] for b in batches for i in b]
    assert flat_lengths == sorted(flat_lengths, reverse=True)  # similar lengths together
    order = list(range(23))
    random.Random(1).shuffle(order)
    shuffled = plan_batches([ids[k] for k in order], [lengths[k] for k in order], 5)
    assert [[ids[order[p]] for p in b] for b in shuffled] == batches
