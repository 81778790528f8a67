"""Answer extraction rules (docs/METHODS.md, "Answers"), the crash-safe store, and the batch plan."""

import json
import random
import re

import pytest

from ocg.core.errors import OcgInputError
from ocg.generation import GenerationStore, extract_answer, plan_batches
from ocg.generation.answer_store.store import repair_duplicates
from ocg.generation.extraction import prompt_opens_think


@pytest.mark.parametrize(
    "raw, rule, expected",
    [
        ("  The dog runs. \n", "plain", ("The dog runs.", "ok")),
        ("   ", "plain", ("", "empty")),
        ("<think>order: dog then run</think>\nThe dog runs.", "think", ("The dog runs.", "ok")),
        ("<think>a</think>x<think>b</think> Final one.", "think", ("Final one.", "ok")),
        ("<think>still thinking about dogs", "think", (None, "unclosed_think")),
        ("The dog runs.", "think", ("The dog runs.", "ok")),
        (
            "<Thought>hmm</Thought><Output>First.</Output><Output>The dog runs.</Output>",
            "marco_o1",
            ("The dog runs.", "ok"),
        ),
        ("<Thought>hmm</Thought>\n<Output>\nThe dog runs.", "marco_o1", ("The dog runs.", "ok")),
        ("<Thought>I never answer", "marco_o1", (None, "no_output")),
        ("Plain sentence.", "marco_o1", ("Plain sentence.", "ok")),
    ],
)
def test_extraction_rules(raw, rule, expected):
    assert extract_answer(raw, rule) == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("<Thought>x</Thought><Output>A dog. </Output><Output>", ("A dog.", "ok")),
        ("<Thought>x</Thought><Output>A dog.</Output>\n<Output>\n  \n</Output>", ("A dog.", "ok")),
        (
            "<Thought>x</Thought><Output>A dog.<Output></Output>",
            ("A dog.", "ok"),
        ),  # unclosed, then an empty one
        (
            "<Thought>draft: <Output>A cat.</Output></Thought><Output>A dog.</Output>",
            ("A dog.", "ok"),
        ),
        ("<Thought>x</Thought><OUTPUT>A dog.</OUTPUT> Hope this helps!", ("A dog.", "ok")),
        (
            "<Thought>x</Thought><Output>A dog.</Output><Output>A cat.",
            ("A cat.", "ok"),
        ),  # cut off, not empty
        ("<Thought>x</Thought><Output></Output><Output>  </Output>", ("", "empty")),
        ("<Thought>x</Thought></Output>", (None, "no_output")),
    ],
)
def test_marco_o1_takes_the_last_non_empty_output(raw, expected):
    """Shapes reasoning models produce: a trailing empty or unclosed <Output>, a draft inside
    the thought, text after the block, tags in another case."""
    assert extract_answer(raw, "marco_o1") == expected


def test_think_opened_by_the_prompt():
    prompt = "<|User|>Concepts...<|Assistant|><think>\n"
    assert prompt_opens_think(prompt)
    assert extract_answer("I am thinking and run out of tokens", "think", True) == (
        None,
        "unclosed_think",
    )
    assert extract_answer("reasoning</think>The dog runs.", "think", True) == (
        "The dog runs.",
        "ok",
    )


def rec(i, **extra):
    return {
        "instance_id": f"id{i}",
        "condition": "ordered",
        "template_id": 0,
        "set_id": "s",
        "perm_index": i,
        "concepts": ["dog", "run"],
        "pos_pattern": "NV",
        "answer": f"answer {i}",
        "answer_status": "ok",
        **extra,
    }


def test_store_appends_once_and_repairs_a_torn_tail_only_when_writing(tmp_path):
    path = tmp_path / "ordered.jsonl"
    store = GenerationStore(path)
    assert store.append([rec(0), rec(1)]) == 2
    assert store.append([rec(1), rec(2)]) == 1  # id1 is never written twice
    torn = b'{"instance_id": "id3", "answ'
    with path.open("ab") as fh:
        fh.write(torn)  # killed mid-write
    before = path.read_bytes()
    reopened = GenerationStore(path)
    assert reopened.done == {("id0", 0), ("id1", 0), ("id2", 0)}
    assert path.read_bytes() == before  # reading never changes the file
    assert reopened.prepare_for_append() == len(torn)
    assert reopened.append([rec(3)]) == 1
    assert [r["instance_id"] for r in GenerationStore(path).records()] == [
        "id0",
        "id1",
        "id2",
        "id3",
    ]


def test_the_store_keys_records_by_id_and_sample(tmp_path):
    path = tmp_path / "ordered.jsonl"
    store = GenerationStore(path)
    assert store.append([rec(0), rec(0, sample=1), rec(1, sample=1)]) == 3
    assert (
        store.append([rec(0, sample=0), rec(0, sample=1), rec(0, sample=2)]) == 1
    )  # no sample twice
    assert GenerationStore(path).done == {("id0", 0), ("id0", 1), ("id1", 1), ("id0", 2)}
    with path.open("a") as fh:
        fh.write(json.dumps(rec(1, sample=1)) + "\n")
    with pytest.raises(
        OcgInputError, match=r":5: instance id1 sample 1 written twice \(first on line 3\)"
    ):
        GenerationStore(path)
    report = repair_duplicates(path)
    assert report["removed"] == [{"line": 5, "why": "second record of id1 sample 1"}]
    with path.open("a") as fh:
        fh.write(json.dumps(rec(2, sample=-1)) + "\n")
    with pytest.raises(OcgInputError, match="'sample' must be a sample index"):
        GenerationStore(path)


def test_a_complete_last_record_without_newline_is_kept(tmp_path):
    path = tmp_path / "ordered.jsonl"
    path.write_text(json.dumps(rec(0)) + "\n" + json.dumps(rec(1)))  # no final newline
    store = GenerationStore(path)
    assert store.done == {("id0", 0), ("id1", 0)}
    assert path.read_text().count("\n") == 1  # untouched by reading
    assert store.prepare_for_append() == 0
    store.append([rec(2)])
    assert [r["instance_id"] for r in GenerationStore(path).records()] == ["id0", "id1", "id2"]


def test_store_refuses_corruption_in_the_middle(tmp_path):
    path = tmp_path / "ordered.jsonl"
    path.write_text(json.dumps(rec(0)) + "\nnot json\n" + json.dumps(rec(1)) + "\n")
    with pytest.raises(OcgInputError, match=rf"{path}:2: malformed record"):
        GenerationStore(path)


@pytest.mark.parametrize(
    "line, what",
    [
        ("{}", "record has no 'instance_id' field"),
        ("42", "expected a JSON object"),
        (json.dumps({k: v for k, v in rec(0).items() if k != "concepts"}), "no 'concepts' field"),
        (json.dumps(rec(0, answer=7)), "field 'answer' must be str or null, got int"),
        (json.dumps(rec(0, answer=["a", "b"])), "field 'answer' must be str or null, got list"),
        (json.dumps(rec(0, template_id="0")), "field 'template_id' must be int"),
    ],
)
def test_records_of_the_wrong_shape_name_file_and_line(tmp_path, line, what):
    path = tmp_path / "ordered.jsonl"
    path.write_text(json.dumps(rec(1)) + "\n" + line + "\n")
    with pytest.raises(OcgInputError, match=rf"{path}:2: .*{re.escape(what)}"):
        GenerationStore(path)


def test_store_refuses_duplicate_ids_and_repair_keeps_the_first(tmp_path):
    path = tmp_path / "ordered.jsonl"
    path.write_text(
        json.dumps(rec(0))
        + "\n"
        + json.dumps(rec(1))
        + "\n"
        + json.dumps(rec(0, answer="second"))
        + "\n"
    )
    with pytest.raises(
        OcgInputError, match=rf"{path}:3: instance id0 written twice \(first on line 1\)"
    ):
        GenerationStore(path)
    report = repair_duplicates(path)
    assert report["kept"] == 2 and report["removed"] == [{"line": 3, "why": "second record of id0"}]
    records = GenerationStore(path).records()
    assert [(r["instance_id"], r["answer"]) for r in records] == [
        ("id0", "answer 0"),
        ("id1", "answer 1"),
    ]
    assert path.with_name("ordered.jsonl.bak").read_text().count("\n") == 3


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
