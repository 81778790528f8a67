"""A store whose companions were damaged, through the CLI: a deleted prompt
file is reported by `ocg repair` and put back by a rerun; foreign records are shown by example; a
set appended to the concept-set file leaves format 3 stores readable, an edited one is named; a
0-byte instances.parquet is one error naming it."""

import shutil

from ocg.cli import main
from ocg.core.paths import CONCEPT_SETS_FILE
from ocg.generation import GenerationStore
from ocg.generation.answer_store import record_format
from tests.hostile.cases import cli, replay_run


def generated(tmp_path, capsys):
    args = replay_run(tmp_path)
    assert main(["generate", "m", "--out", str(tmp_path / "gen"), *map(str, args)]) == 0
    capsys.readouterr()
    return tmp_path / "gen" / "m", args


def test_a_deleted_prompt_file_is_reported_by_repair_and_put_back_by_a_rerun(tmp_path, capsys):
    store, args = generated(tmp_path, capsys)
    prompts = store / "ordered.prompts.jsonl.gz"
    before = {r["instance_id"]: r["prompt"] for r in GenerationStore.read(store / "ordered.jsonl")}
    prompts.unlink()
    code, err = cli(capsys, "repair", store)
    assert (
        code == 1 and f"ocg: error: {prompts}: 24 prompt(s) named by records are missing" in err
    ), err
    assert main(["generate", "m", "--out", str(tmp_path / "gen"), *map(str, args)]) == 0
    out = capsys.readouterr().out
    assert f"{prompts}: put back 24 of 24 lost prompt(s)" in out, out
    assert {
        r["instance_id"]: r["prompt"] for r in GenerationStore.read(store / "ordered.jsonl")
    } == before
    assert main(["repair", str(store)]) == 0


def test_foreign_records_are_shown_by_example(tmp_path, capsys):
    store, _ = generated(tmp_path, capsys)
    shutil.copy(
        store / "ordered.jsonl", store / "original.jsonl"
    )  # the same ids again, in another file
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "s"),
                "--metrics",
                "distinct",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "24 foreign records (not asked by the run card) left out: ordered: 24 (e.g. ordered-t0-"
        in out
    ), out
    assert "(e.g. )" not in out


def _sets_file(tmp_path, monkeypatch, change):
    lines = CONCEPT_SETS_FILE.read_text().splitlines()
    path = tmp_path / "sets.jsonl"
    path.write_text("\n".join(change(lines)) + "\n")
    monkeypatch.setattr(record_format, "CONCEPT_SETS_FILE", path)
    record_format.shipped_sets.cache_clear()
    return path


def test_a_set_appended_to_the_concept_sets_leaves_stores_readable(tmp_path, capsys, monkeypatch):
    store, _ = generated(tmp_path, capsys)
    extra = '{"id": "appended-by-hand", "concept_set": ["cat_N", "sleep_V", "sofa_N", "sun_N"]}'
    try:
        _sets_file(tmp_path, monkeypatch, lambda lines: [*lines, extra])
        assert len(GenerationStore.read(store / "ordered.jsonl")) == 24
        assert (
            main(
                [
                    "score",
                    "--generations",
                    str(tmp_path / "gen"),
                    "--out",
                    str(tmp_path / "s"),
                    "--metrics",
                    "distinct",
                ]
            )
            == 0
        )
        edited = _sets_file(tmp_path, monkeypatch, lambda lines: [lines[1], lines[0], *lines[2:]])
        code, err = cli(
            capsys,
            "score",
            "--generations",
            tmp_path / "gen",
            "--out",
            tmp_path / "s2",
            "--metrics",
            "distinct",
        )
        assert code == 2 and f"the first 400 sets of {edited} now have digest" in err, err
        assert "that file was edited" in err and "the ocg that wrote it" not in err
    finally:
        record_format.shipped_sets.cache_clear()


def test_an_empty_instances_parquet_is_named(tmp_path, capsys):
    assert main(["build-data", "--subset-k", "1", "--out", str(tmp_path / "ds")]) == 0
    (tmp_path / "ds" / "instances.parquet").write_bytes(b"")
    args = replay_run(tmp_path)
    code, err = cli(
        capsys,
        "generate",
        "m",
        "--out",
        tmp_path / "gen",
        "--dataset",
        tmp_path / "ds",
        *[a for a in args if a not in ("--subset-k", 1)],
    )
    assert (
        code == 2
        and f"ocg: error: {tmp_path / 'ds' / 'instances.parquet'}: not a readable parquet file "
        "(0 bytes"
        in err
        and "rebuild the dataset" in err
    ), err
