"""Bad input stops with an error naming the file and line or key; nothing half-written."""

import json

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.paths import TEMPLATES_FILE
from ocg.data import build_dataset, build_instances, load_concept_sets, load_templates

GOOD = [
    {"id": "a", "concept_set": ["catch_V", "dog_N", "frisbee_N", "throw_V"]},
    {"id": "b", "concept_set": ["food_N", "front_N", "sit_V", "table_N"]},
]


def write_sets(tmp_path, lines):
    path = tmp_path / "sets.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def write_templates(tmp_path, edit):
    import yaml

    raw = yaml.safe_load(TEMPLATES_FILE.read_text())
    edit(raw)
    path = tmp_path / "templates.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_malformed_json_line(tmp_path):
    path = write_sets(tmp_path, [GOOD[0], '{"id": "x", "concept_set": [', GOOD[1]])
    with pytest.raises(OcgInputError, match=rf"{path}:2: malformed JSON"):
        load_concept_sets(4, path)


def test_set_of_unsupported_size(tmp_path):
    path = write_sets(tmp_path, [GOOD[0], {"id": "c", "concept_set": ["dog_N", "run_V", "park_N"]}])
    with pytest.raises(
        OcgInputError, match=rf"{path}:2: concept set c has 3 concepts; expected one of"
    ):
        load_concept_sets(4, path)


def test_requested_set_of_wrong_size_for_n(tmp_path):
    five = {"id": "f", "concept_set": ["dog_N", "run_V", "park_N", "ball_N", "throw_V"]}
    path = write_sets(tmp_path, [GOOD[0], five])
    with pytest.raises(OcgInputError, match=rf"{path}:2: concept set f has 5 concepts; expected 4"):
        load_concept_sets(4, path, set_ids=["a", "f"])
    with pytest.raises(OcgInputError, match="no concept set has 5"):
        load_concept_sets(5, write_sets(tmp_path, GOOD))


def test_unknown_pos_suffix(tmp_path):
    path = write_sets(
        tmp_path, [GOOD[0], {"id": "c", "concept_set": ["dog_N", "run_X", "a_N", "b_N"]}]
    )
    with pytest.raises(
        OcgInputError, match=rf"{path}:2: unknown POS suffix 'X' in 'run_X'; expected one of N, V"
    ):
        load_concept_sets(4, path)


def test_duplicate_set_ids(tmp_path):
    path = write_sets(tmp_path, [GOOD[0], GOOD[1], GOOD[0]])
    with pytest.raises(OcgInputError, match=rf"{path}:3: duplicate set id a \(first on line 1\)"):
        load_concept_sets(4, path)


def test_template_without_concepts(tmp_path):
    path = write_templates(
        tmp_path, lambda r: r["templates"][3].update(ordered="Write a sentence.")
    )
    with pytest.raises(
        OcgInputError, match=r"templates.3.ordered: expected exactly one \{concepts\}"
    ):
        load_templates(path)


def test_template_with_unknown_placeholder(tmp_path):
    path = write_templates(
        tmp_path, lambda r: r["templates"][1].update(original="Keywords: {concepts} {words}")
    )
    with pytest.raises(
        OcgInputError, match=r"templates.1.original: unknown placeholder\(s\) \{words\}"
    ):
        load_templates(path)


def test_unknown_condition_and_template_id():
    config = load_templates()
    sets = load_concept_sets()[:1]
    with pytest.raises(OcgInputError, match=r"conditions: unknown condition 'shuffled'; known: "):
        build_instances(sets, config, ["ordered", "shuffled"])
    with pytest.raises(
        OcgInputError, match=r"templates: unknown template id 9; known: \[0, 1, 2, 3, 4, 5\]"
    ):
        build_instances(sets, config, ["ordered"], template_ids=[0, 9])


def test_cli_reports_bad_input_without_traceback(tmp_path, capsys):
    from ocg.cli import main

    assert main(["build-data", "--conditions", "nope", "--out", str(tmp_path / "x")]) == 2
    assert "unknown condition 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_failed_write_leaves_previous_build_intact(outputs, monkeypatch):
    path = build_dataset(subset_k=2, conditions=["ordered"])
    before = {p.name: p.read_bytes() for p in path.iterdir()}
    import pandas as pd

    def boom(self, *a, **k):
        open(a[0], "wb").write(b"partial")  # a crash halfway through writing
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", boom)
    with pytest.raises(OSError, match="disk full"):
        build_dataset(subset_k=2, conditions=["ordered", "original"])
    after = {p.name: p.read_bytes() for p in path.iterdir()}
    assert after == before  # no temporary file left, nothing overwritten
