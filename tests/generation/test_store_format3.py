"""Store format 3: records in short keys without the fields their instance id, the shipped
concept sets and their answer give back; every record reads back exactly as given, format 1, 2
and 3 lines read together, a record that would not read back is written in format 2."""

import copy
import itertools
import json
import re

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.files import loads_json
from ocg.core.layout import ModelGenerations
from ocg.data.instances import instance_id
from ocg.generation import GenerationStore, generate, read_generations
from ocg.generation.answer_store import record_format
from ocg.generation.answer_store import store as store_module
from ocg.generation.answer_store.record_format import (
    CONCEPT_SETS_DIGEST,
    decode,
    encode,
    shipped_sets,
)
from ocg.generation.backends.chat import prompt_sha256

DERIVED_KEYS = {"c", "t", "s", "p", "k", "q"}  # condition ... pos_pattern, left out when derivable


def shipped(index=0):
    set_id, concepts = list(shipped_sets()[0].items())[index]
    return set_id, concepts


def real_record(
    perm=0, cond="ordered", tid=2, set_index=0, answer="The dog caught the frisbee.", **change
):
    """A record as generate writes it (ocg/generation/run_generation.py), of a shipped concept set."""
    set_id, concepts = shipped(set_index)
    order = list(itertools.permutations(concepts))[perm]
    prompt = (
        f"<|im_start|>user\nWrite one sentence with: {', '.join(c.word for c in order)}<|im_end|>\n"
    )
    record = {
        "instance_id": instance_id(cond, tid, set_id, perm),
        "model": "org/model-7b",
        "condition": cond,
        "template_id": tid,
        "set_id": set_id,
        "perm_index": perm,
        "concepts": [c.word for c in order],
        "pos_pattern": "".join(c.pos for c in order),
        "prompt": prompt,
        "prompt_sha256": prompt_sha256(prompt),
        "answer": answer,
        "answer_status": "ok",
        "answer_source": "raw",
        "raw": answer,
        "finish_reason": "stop",
        "prompt_tokens": 41,
        "completion_tokens": 9,
        "batch_index": 0,
        "planned_batch_size": 24,
        "system_mode": "system",
        "time_utc": "2026-12-03T05:49:44+00:00",
    }
    record.update(change)
    return record


def without_prompt(record):
    return {k: v for k, v in record.items() if k != "prompt"}


def lines_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def compact(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def ordered_items(records):
    return [list(r.items()) for r in records]


def test_a_generated_store_is_format_3_and_reads_back_exactly_what_generate_gave(
    tmp_path, monkeypatch
):
    given = []
    append = GenerationStore.append

    def spy(self, records):
        given.extend(copy.deepcopy(records))
        return append(self, records)

    monkeypatch.setattr(GenerationStore, "append", spy)
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  synth: {backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 16}\n"
    )
    folder = generate(
        "synth",
        conditions=["original", "ordered"],
        subset_k=2,
        template_ids=[0, 3],
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
    )
    back = [
        r
        for c in ("original", "ordered")
        for r in GenerationStore.read(ModelGenerations(folder).store(c))
    ]
    assert len(back) == len(given) == 2 * 2 * 2 * 24
    assert ordered_items(back) == ordered_items(given)  # every field, its value, type and place
    on_disk = [
        x for c in ("original", "ordered") for x in lines_of(ModelGenerations(folder).store(c))
    ]
    assert all(list(x)[0] == "f" and x["f"] == 3 and not DERIVED_KEYS & set(x) for x in on_disk)
    assert sum("r" in x for x in on_disk) == sum(r["raw"] != r["answer"] for r in given)
    text = ModelGenerations(folder).store("ordered").read_text(encoding="utf-8").splitlines()
    assert text == [compact(json.loads(line)) for line in text]
    format2 = sum(len(json.dumps(without_prompt(r), ensure_ascii=False)) + 1 for r in given)
    format3 = sum(ModelGenerations(folder).store(c).stat().st_size for c in ("original", "ordered"))
    assert format3 < 0.55 * format2, (format3, format2)


def test_a_store_of_format_1_2_and_3_lines_reads_as_the_records_given(tmp_path, monkeypatch):
    path = tmp_path / "m" / "ordered.jsonl"
    path.parent.mkdir()
    given = [real_record(perm=p, answer=f"Answer {p}.") for p in range(9)]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in given[:3])
    )  # format 1 (c20dad0)
    with monkeypatch.context() as m:
        m.setattr(store_module, "encode", lambda record: None)  # the store as it wrote format 2
        GenerationStore(path).append(given[3:6])
    GenerationStore(path).append(given[6:])
    kinds = [
        "f" if "f" in x else "prompt" if "prompt" in x else "prompt_sha256" for x in lines_of(path)
    ]
    assert kinds == ["prompt"] * 3 + ["prompt_sha256"] * 3 + ["f"] * 3
    assert ordered_items(GenerationStore.read(path)) == ordered_items(given)
    frame = read_generations(tmp_path / "m")
    assert frame.concepts.tolist() == [r["concepts"] for r in given] and list(
        frame.columns
    ) == list(given[0])
    assert read_generations(tmp_path / "m", prompts=False).instance_id.tolist() == [
        r["instance_id"] for r in given
    ]


def test_a_record_that_would_not_read_back_is_written_in_format_2(tmp_path, monkeypatch):
    real_decode = record_format.decode

    def lossy(obj, where):  # a format 3 that loses a field: the writer's check must catch it
        out = real_decode(obj, where)
        out.pop("finish_reason", None)
        return out

    monkeypatch.setattr(record_format, "decode", lossy)
    path = tmp_path / "m" / "ordered.jsonl"
    given = [real_record(perm=0), without_prompt(real_record(perm=1))]
    del given[1]["finish_reason"]  # this one format 3 still writes
    GenerationStore(path).append(copy.deepcopy(given))
    first, second = lines_of(path)
    assert (
        "f" not in first and first["finish_reason"] == "stop" and "prompt_sha256" in first
    )  # format 2
    assert second["f"] == 3
    monkeypatch.undo()
    assert ordered_items(GenerationStore.read(path, prompts=False)) == ordered_items(
        [without_prompt(given[0]), given[1]]
    )
    assert encode({**without_prompt(given[1]), 7: "a key JSON writes as text"}) is None
    odd = {**without_prompt(real_record(perm=2)), 7: "a key JSON writes as text", "f": 3}
    with pytest.raises(
        ValueError, match="a field 'f' that format 3 cannot write would read as format 3"
    ):
        GenerationStore(path).append(
            [odd]
        )  # format 2 would hold a line the reader takes for format 3
    assert len(lines_of(path)) == 2


@pytest.mark.parametrize(
    "change, kept",
    [
        ({}, set()),
        ({"raw": "<think>x</think>The dog caught the frisbee."}, {"r"}),
        ({"answer": None, "raw": "", "answer_status": "empty"}, {"r"}),
        ({"answer": None, "raw": None}, set()),
        ({"condition": "original"}, {"c"}),  # appended by hand: the id spells another condition
        ({"template_id": 4}, {"t"}),
        (
            {"concepts": ["hound", "catch", "disc", "throw"]},
            {"k"},
        ),  # another dataset under a shipped id
        ({"pos_pattern": "NNNN"}, {"q"}),
        (
            {
                "set_id": "not-shipped",
                "instance_id": instance_id("ordered", 2, "not-shipped", 5),
                "perm_index": 5,
            },
            {"k", "q"},
        ),
        (
            {"perm_index": 999, "instance_id": instance_id("ordered", 2, shipped()[0], 999)},
            {"k", "q"},
        ),  # 4! orders
        (
            {"instance_id": "hand-made"},
            {"c", "t", "s", "p"},
        ),  # concepts: from the set and permutation written
    ],
)
def test_a_field_is_left_out_only_where_it_is_derived_exactly(change, kept):
    record = without_prompt(real_record(perm=17, **change))
    line = encode(record)
    on_disk = json.loads(line)
    assert DERIVED_KEYS & set(on_disk) | ({"r"} & set(on_disk)) == kept
    assert list(decode(loads_json(line), "x").items()) == list(record.items())
    assert line.startswith('{"f":3,"i":') and line == compact(on_disk)


def test_missing_unknown_and_reordered_fields_read_back_as_given():
    record = without_prompt(real_record(perm=3))
    del record["raw"]  # a record without raw is not given one back
    del record["pos_pattern"]
    record.update(
        {"f": 1, "a2": [1.5, None], "a": "not the answer", "~t": True, "z": {}, "grammar": "(?s).*"}
    )
    line = encode(record)
    assert json.loads(line)["z"] == ["q", "r"] and {"~f", "~a", "~~t", "~z"} <= set(
        json.loads(line)
    )
    assert list(decode(loads_json(line), "x").items()) == list(record.items())
    moved = {"concepts": record["concepts"], **{k: v for k, v in record.items() if k != "concepts"}}
    assert list(decode(loads_json(encode(moved)), "x").items()) == list(moved.items())


def test_concepts_are_derived_only_from_the_pinned_concept_sets(tmp_path, monkeypatch):
    assert (
        shipped_sets()[1] == CONCEPT_SETS_DIGEST
    )  # the shipped sets changed: keep a copy for the stores
    path = tmp_path / "m" / "ordered.jsonl"
    GenerationStore(path).append([real_record(perm=5)])
    assert not DERIVED_KEYS & set(lines_of(path)[0])
    sets, _ = shipped_sets()
    monkeypatch.setattr(record_format, "shipped_sets", lambda: (sets, "another digest"))
    other = tmp_path / "n" / "ordered.jsonl"
    GenerationStore(other).append([real_record(perm=6)])
    assert {"k", "q"} <= set(lines_of(other)[0]) and not {"c", "t", "s", "p"} & set(
        lines_of(other)[0]
    )
    assert ordered_items(GenerationStore.read(other)) == ordered_items([real_record(perm=6)])
    with pytest.raises(
        OcgInputError,
        match=rf"{path}:1: concepts left out, to be derived from the concept sets "
        rf"of digest {CONCEPT_SETS_DIGEST[:12]}",
    ):
        GenerationStore.read(path)


def test_a_torn_format_3_line_is_skipped_cut_and_the_run_resumes(tmp_path):
    path = tmp_path / "m" / "ordered.jsonl"
    given = [real_record(perm=p) for p in range(6)]
    GenerationStore(path).append(given[:4])
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]) + lines[3][:40])  # killed mid-write
    assert ordered_items(GenerationStore.read(path)) == ordered_items(given[:3])
    store = GenerationStore(path)
    assert store.prepare_for_append() == 40 and path.read_bytes() == b"".join(lines[:3])
    assert store.append(given) == 3 and ordered_items(GenerationStore.read(path)) == ordered_items(
        given
    )
    path.write_bytes(path.read_bytes()[:-1])  # a complete last line without its newline is kept
    store = GenerationStore(path)
    assert (
        store.prepare_for_append() == 0
        and path.read_bytes().endswith(b"}\n")
        and len(store.done) == 6
    )


@pytest.mark.parametrize(
    "bad, what",
    [
        (
            '{"f":3,"i":"ordered-t0-nosuchset-p000","m":"x","a":"A.","as":"ok"}',
            "field 'concepts' is not written",
        ),
        ('{"f":3,"i":5,"m":"x","a":"A.","as":"ok"}', "field 'condition' is not written"),
        ('{"f":4,"i":"x","a":"A."}', "store format 4: this ocg reads formats 1 to 3"),
        ('{"i":"x","f":3}', 'the format marker "f" is not the first field'),
        (
            '{"f":3,"z":["r"],"i":"hand","c":"ordered","t":0,"s":"x","p":0,"k":["a"],"q":"N","answer":"A.","as":"ok"}',
            "field 'answer' in a format 3 line, where it is written 'a'",
        ),
        ('{"f":3,"z":"r","i":"x"}', "field 'z' must list short keys"),
        (
            '{"f":3,"z":["r"],"i":"hand","c":"ordered","t":"0","s":"x","p":0,"k":["a"],"q":"N","a":"A.","as":"ok"}',
            "field 'template_id' must be int",
        ),
    ],
)
def test_a_spoilt_format_3_line_names_file_and_line(tmp_path, bad, what):
    path = tmp_path / "m" / "ordered.jsonl"
    GenerationStore(path).append([real_record()])
    with path.open("a") as fh:
        fh.write(bad + "\n")
    with pytest.raises(OcgInputError, match=rf"{path}:2: .*{what}"):
        GenerationStore.read(path)


def test_repair_and_replay_read_format_3_lines(tmp_path):
    from ocg.generation.backends.replay_backend import read_answers

    path = tmp_path / "m" / "ordered.jsonl"
    given = [real_record(perm=p, answer=f"Answer {p}.") for p in range(3)]
    GenerationStore(path).append(given)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines + [lines[1].replace("Answer 1.", "Again.")]) + "\n")
    assert [r["line"] for r in store_module.repair_duplicates(path)["removed"]] == [4]
    assert ordered_items(GenerationStore.read(path)) == ordered_items(given)
    assert read_answers(path) == {(r["instance_id"], 0): r["answer"] for r in given}


def test_the_table_of_short_keys_in_docs_is_the_code_s():
    from ocg.core.paths import PROJECT_ROOT
    from ocg.generation.answer_store.record_format import LONG_TO_SHORT

    text = (PROJECT_ROOT / "docs" / "DATA.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (.+) \|$", text, flags=re.M)
    assert {long: short for long, short, _ in rows} == LONG_TO_SHORT
    left_out = {long for long, _, when in rows if not when.startswith("never")}
    assert left_out == set(record_format.DERIVABLE)
