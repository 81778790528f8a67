"""Store format 2: each distinct prompt once in `<condition>.prompts.jsonl.gz`, records keeping its
sha256, the reader putting it back; format 1 stores (prompts inline) still read."""

import gzip
import json
import os

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.layout import ModelGenerations
from ocg.generation import GenerationStore, generate, read_generations
from ocg.generation.answer_store import appending
from ocg.generation.backends.chat import prompt_sha256
from tests.helpers import disk_record


def records(
    n,
    samples=1,
    prompt=lambda i: f"<|im_start|>user\nWrite one sentence with: dog, ball, {i}<|im_end|>\n",
):
    out = []
    for i in range(n):
        p = prompt(i)
        for s in range(samples):
            out.append(
                {
                    "instance_id": f"ordered-t0-s-p{i}",
                    **({"sample": s} if samples > 1 else {}),
                    "model": "m",
                    "condition": "ordered",
                    "template_id": 0,
                    "set_id": "s",
                    "perm_index": i,
                    "concepts": ["dog", "ball"],
                    "pos_pattern": "NN",
                    "prompt": p,
                    "prompt_sha256": prompt_sha256(p),
                    "answer": f"answer {i} {s}",
                    "answer_status": "ok",
                }
            )
    return out


def prompt_lines(path):
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def test_each_prompt_is_stored_once_and_records_read_as_they_were_given(tmp_path):
    store_path = ModelGenerations(tmp_path / "m").store("ordered")
    given = records(6, samples=3) + records(
        1, prompt=lambda i: [{"role": "user", "content": "api messages"}]
    )
    given[-1]["instance_id"] = "ordered-t1-s-p0"
    store = GenerationStore(store_path)
    assert store.append(given[:8]) == 8 and store.append(given) == len(given) - 8
    on_disk = [disk_record(line) for line in store_path.read_text().splitlines()]
    assert all("prompt" not in r and len(r["prompt_sha256"]) == 64 for r in on_disk)
    stored = prompt_lines(ModelGenerations(tmp_path / "m").store("ordered", prompts=True))
    assert (
        len(stored) == 7 == len({r["prompt_sha256"] for r in given})
    )  # 6 texts shared by 3 samples, 1 message list
    back = GenerationStore.read(store_path)
    assert back == given and [list(r) for r in back] == [
        list(r) for r in given
    ]  # the same fields, in order
    assert read_generations(tmp_path / "m").prompt.tolist() == [r["prompt"] for r in given]
    assert "prompt" not in read_generations(tmp_path / "m", prompts=False)


def test_a_store_written_before_format_2_reads_and_takes_new_records(tmp_path):
    """c20dad0 wrote each record with its prompt inline; such a store reads as it did, and
    appending to it keeps the old lines as they are."""
    store_path = tmp_path / "m" / "ordered.jsonl"
    store_path.parent.mkdir()
    old = records(3)
    store_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in old))
    assert GenerationStore.read(store_path) == old
    new = records(5)[3:]
    GenerationStore(store_path).append(new)
    assert GenerationStore.read(store_path) == old + new
    assert [("prompt" in json.loads(line)) for line in store_path.read_text().splitlines()] == [
        True
    ] * 3 + [False] * 2


def test_prompts_reach_the_disk_before_the_records_that_name_them(tmp_path, monkeypatch):
    writes = []
    real = appending.append_synced

    def spy(path, payload):
        writes.append(path.name)
        if path.suffix == ".jsonl":
            raise OSError(
                28, "No space left on device"
            )  # killed / disk full between the two writes
        real(path, payload)

    monkeypatch.setattr("ocg.generation.answer_store.store.append_synced", spy)
    monkeypatch.setattr("ocg.generation.answer_store.prompt_file.append_synced", spy)
    store_path = tmp_path / "m" / "ordered.jsonl"
    with pytest.raises(OSError):
        GenerationStore(store_path).append(records(2))
    assert writes == ["ordered.prompts.jsonl.gz", "ordered.jsonl"]
    assert (
        len(prompt_lines(tmp_path / "m" / "ordered.prompts.jsonl.gz")) == 2
        and GenerationStore.read(store_path) == []
    )


def test_a_torn_prompt_block_is_skipped_and_cut_before_the_next_write(tmp_path):
    store_path = tmp_path / "m" / "ordered.jsonl"
    GenerationStore(store_path).append(records(2))
    prompts = tmp_path / "m" / "ordered.prompts.jsonl.gz"
    whole = prompts.stat().st_size
    block = gzip.compress(b'"never named by a record"\n')
    with prompts.open("ab") as fh:
        fh.write(block[: len(block) // 2])  # killed in the middle of writing a block
    assert GenerationStore.read(store_path) == records(2)
    store = GenerationStore(store_path)
    store.prepare_for_append()
    assert prompts.stat().st_size == whole
    store.append(records(4))
    assert GenerationStore.read(store_path) == records(4) and len(prompt_lines(prompts)) == 4


def test_a_missing_or_edited_prompt_names_the_file_and_line(tmp_path):
    store_path = tmp_path / "m" / "ordered.jsonl"
    GenerationStore(store_path).append(records(2))
    prompts = tmp_path / "m" / "ordered.prompts.jsonl.gz"
    lines = prompt_lines(prompts)
    prompts.write_bytes(gzip.compress((json.dumps(lines[0]) + "\n{oops\n").encode()))
    with pytest.raises(
        OcgInputError, match=r"ordered.prompts.jsonl.gz: member at byte 0, line 2: malformed line"
    ):
        GenerationStore.read(store_path)
    lines[1] += " (edited)"  # its sha256 is no record's any more
    prompts.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    with pytest.raises(
        OcgInputError,
        match=rf"{store_path}:2: prompt '[0-9a-f]{{64}}' is not in ordered.prompts.jsonl.gz",
    ):
        GenerationStore.read(store_path)
    prompts.write_bytes(b"not gzip at all")
    with pytest.raises(OcgInputError, match="not gzip from byte 0"):
        GenerationStore.read(store_path)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_store_files_follow_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        GenerationStore(tmp_path / "m" / "ordered.jsonl").append(records(1))
    finally:
        os.umask(previous)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "m").iterdir()}
    assert modes == {
        "ordered.jsonl": oct(0o666 & ~umask),
        "ordered.prompts.jsonl.gz": oct(0o666 & ~umask),
    }


def test_the_prompt_file_is_never_written_through_a_link(tmp_path):
    (tmp_path / "m").mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "m" / "ordered.prompts.jsonl.gz").symlink_to(victim)
    with pytest.raises(
        OcgInputError, match=r"ordered.prompts.jsonl.gz: a symbolic link \(to .*victim\)"
    ):
        GenerationStore(tmp_path / "m" / "ordered.jsonl").append(records(1))
    assert victim.read_bytes() == b"precious" and not (tmp_path / "m" / "ordered.jsonl").exists()


def test_a_generated_store_keeps_every_prompt_in_a_fraction_of_the_space(tmp_path):
    """A replay run: records without prompts, each prompt once, written before generation; every
    record reads back with the prompt the model was asked (its sha256 checked)."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n  synth: {backend: replay, id: meta-llama/Llama-3.2-1B-Instruct, batch_size: 16}\n"
    )
    folder = generate(
        "synth",
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
        conditions=["ordered", "ordered_one_shot"],
        subset_k=2,
    )
    table = read_generations(folder)
    assert (
        len(table) == 2 * 2 * 24 * 6
        and table.prompt.map(prompt_sha256).eq(table.prompt_sha256).all()
    )
    for cond in ("ordered", "ordered_one_shot"):
        lines = ModelGenerations(folder).store(cond).read_text().splitlines()
        assert not any('"prompt":' in line for line in lines)
        inline = sum(
            len(json.dumps(p, ensure_ascii=False)) for p in table[table.condition == cond].prompt
        )
        assert ModelGenerations(folder).store(cond, prompts=True).stat().st_size < inline / 10
