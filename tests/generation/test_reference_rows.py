"""Reference rows: a replay entry that answers per concept set (`replay: {key: set_id, model}`),
as the 12 CommonGen-Eval references of params/reference-models.yaml do, answering only `original`."""

import json

import pytest
import yaml

from ocg.config.model_registry import load_models
from ocg.core.errors import OcgInputError
from ocg.core.paths import COMMONGEN_EVAL_5CONCEPT, PARAMS_DIR
from ocg.generation import generate, read_generations, select_instances
from ocg.jobs.pipeline import load_run
from ocg.jobs.plan import Dirs, notebook_params

REFERENCES = [
    "gpt-4-0613",
    "gpt-4-1106-preview",
    "gpt-3.5-turbo",
    "mixtral-8x7b-instruct",
    "yi-34b-chat",
    "yi-6b-chat",
    "tulu-2-dpo-70b",
    "llama-2-7b-chat",
    "vicuna-13b-v1.5",
    "zephyr-7b-beta",
    "pallas-0.5",
    "turnopt",
]


def models_file(tmp_path, sets_file, **replay):
    path = tmp_path / "m.yaml"
    entry = {"backend": "replay", "id": "x/ref", "reference": "a test's sentences"}
    entry["replay"] = {"file": str(sets_file), "key": "set_id", **replay}
    path.write_text(
        yaml.safe_dump({"extends": str(PARAMS_DIR / "models.yaml"), "models": {"ref-x": entry}})
    )
    return path


def test_a_set_answers_every_instance_of_the_set(tmp_path):
    rows = select_instances(conditions=["original"], subset_k=2, template_ids=[0, 4])
    sets = sorted(rows.set_id.unique())
    lines = [{"model": m, "id": s, "output": f"{m} wrote for {s}."} for s in sets for m in "ab"]
    sets_file = tmp_path / "sets.jsonl"
    sets_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    spec = load_models(models_file(tmp_path, sets_file, model="b"))["ref-x"]
    out = generate(
        spec,
        conditions=["original"],
        subset_k=2,
        template_ids=[0, 4],
        out_dir=tmp_path / "g",
        progress=False,
    )
    got = read_generations(out)
    assert len(got) == len(rows) > len(sets)  # every instance, not one per set
    assert (got.answer == "b wrote for " + got.set_id + ".").all()


def test_a_set_the_file_lacks_is_named(tmp_path):
    sets_file = tmp_path / "sets.jsonl"
    sets_file.write_text(json.dumps({"model": "b", "id": "not-a-set", "output": "x"}) + "\n")
    spec = load_models(models_file(tmp_path, sets_file, model="b"))["ref-x"]
    with pytest.raises(OcgInputError, match=r"no answer for the concept set of \d+ of the"):
        generate(
            spec, conditions=["original"], subset_k=1, template_ids=[0], out_dir=tmp_path / "g"
        )
    spec = load_models(models_file(tmp_path, sets_file, model="c"))["ref-x"]
    with pytest.raises(OcgInputError, match=r"no line of model 'c'"):
        generate(
            spec, conditions=["original"], subset_k=1, template_ids=[0], out_dir=tmp_path / "g"
        )


def test_the_five_concept_run_has_twelve_shipped_references_in_original_only(tmp_path):
    raw = yaml.safe_load((PARAMS_DIR / "runs" / "five-concepts.yaml").read_text())
    refs = [f"ref-{m}" for m in REFERENCES]
    assert raw["models"] == ["smollm2-135m-instruct", *refs]  # shipped: the model, then all 12
    assert raw["models_file"] == "../reference-models.yaml"
    raw.update(models_file=str(PARAMS_DIR / "reference-models.yaml"))  # the copy lies elsewhere
    (tmp_path / "with-references.yaml").write_text(yaml.safe_dump(raw))
    run = load_run(tmp_path / "with-references.yaml")
    references = {m: e for m, e in run.entries.items() if e.reference}
    assert len(references) == 12 and all(m.startswith("ref-") for m in references)
    shipped = {json.loads(line)["model"] for line in COMMONGEN_EVAL_5CONCEPT.open()}
    assert {e.replay.model for e in references.values()} == shipped
    assert all(
        "CommonGen-Eval" in e.reference and "Apache-2.0" in e.reference for e in references.values()
    )
    dirs = Dirs(tmp_path / "g", tmp_path / "s", tmp_path / "r")
    assert notebook_params("01_generate", run, dirs, ["ref-gpt-4-0613"]).conditions == ["original"]
    assert notebook_params("01_generate", run, dirs, ["smollm2-135m-instruct"]).conditions == [
        "original",
        "ordered",
    ]
    raw.update(conditions=["ordered"])
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(OcgInputError, match=r"models\[1\]: 'ref-gpt-4-0613' is a reference"):
        load_run(tmp_path / "r.yaml")


def test_ocg_generate_gives_a_reference_only_original(tmp_path, capsys):
    """`ocg generate REF` without --conditions answers only `original` (a reference was asked no
    order); asking it `ordered` is refused in one line naming the conditions."""
    from ocg.cli import main

    rows = select_instances(conditions=["original"], subset_k=1, template_ids=[0])
    lines = [{"model": "b", "id": s, "output": f"b wrote for {s}."} for s in rows.set_id.unique()]
    sets_file = tmp_path / "sets.jsonl"
    sets_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    models = models_file(tmp_path, sets_file, model="b")
    argv = [
        "generate",
        "ref-x",
        "--models-file",
        str(models),
        "--subset-k",
        "1",
        "--templates",
        "0",
    ]
    assert main([*argv, "--out", str(tmp_path / "g")]) == 0
    assert sorted(p.name for p in (tmp_path / "g" / "ref-x").glob("*.jsonl")) == ["original.jsonl"]
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "h"), "--conditions", "ordered"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "ocg: error: conditions: ref-x is a reference: it answers only 'original', not ['ordered']"
    ], err


@pytest.mark.parametrize(
    "name, entry, expected",
    [
        (
            "ref-y",
            {},
            "models.ref-y.reference: missing: a name starting 'ref-' marks a reference entry",
        ),
        (
            "mine",
            {"reference": "CommonGen-Eval"},
            "models.mine: a reference entry's name starts with 'ref-'",
        ),
    ],
)
def test_a_ref_name_and_reference_go_together(tmp_path, capsys, name, entry, expected):
    """`ref-NAME` without `reference:`, or `reference:` under another name, is refused when the
    models file is read (exit 2, one line naming the entry); with both, it loads."""
    from ocg.cli import main

    (tmp_path / "sets.jsonl").write_text("{}\n")
    replay = {"file": "sets.jsonl", "key": "set_id"}
    path = tmp_path / "m.yaml"
    path.write_text(
        yaml.safe_dump(
            {"models": {name: {"backend": "replay", "id": "x/r", "replay": replay, **entry}}}
        )
    )
    assert main(["models", "--models-file", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"ocg: error: {path}: {expected}"), err
    fixed = {"ref-y": {**entry, "reference": "CommonGen-Eval"}, "mine": {}}[name]
    path.write_text(
        yaml.safe_dump(
            {"models": {name: {"backend": "replay", "id": "x/r", "replay": replay, **fixed}}}
        )
    )
    assert main(["models", "--models-file", str(path)]) == 0
    assert main(["models", "--models-file", str(PARAMS_DIR / "reference-models.yaml")]) == 0


def test_a_lines_concept_set_is_checked_against_its_set(tmp_path, capsys):
    """A set-answers line whose `concept_set` is another set's (CommonGen-Eval's `_N`/`_V` tags
    dropped) is refused naming file and line; the right concepts, in any order and tagged, pass."""
    from ocg.cli import main

    rows = select_instances(conditions=["original"], subset_k=2, template_ids=[0])
    sets = rows.drop_duplicates("set_id")
    concepts = {s: list(c) for s, c in zip(sets.set_id, sets.concepts)}
    (first, a), (second, b) = list(concepts.items())[:2]
    lines = [
        {"model": "b", "id": s, "concept_set": [f"{w}_N" for w in reversed(c)], "output": "A."}
        for s, c in concepts.items()
    ]
    sets_file = tmp_path / "sets.jsonl"
    sets_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    models = models_file(tmp_path, sets_file, model="b")
    argv = [
        "generate",
        "ref-x",
        "--models-file",
        str(models),
        "--subset-k",
        "2",
        "--templates",
        "0",
    ]
    assert main([*argv, "--out", str(tmp_path / "g")]) == 0
    lines[1]["concept_set"] = a  # the second line names the first set's concepts
    sets_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"ocg: error: {sets_file}:2: concept_set "), err
    assert f"is not the concepts of set {second}" in err[0]
    assert not (tmp_path / "h" / "ref-x" / "original.jsonl").exists()


def test_the_shipped_references_name_their_sets_concepts():
    """Every line of the shipped CommonGen-Eval file names the concepts of its set."""
    from ocg.generation.backends.replay_backend import read_set_answers

    rows = select_instances(n_concepts=5, conditions=["original"])
    sets = {s: sorted(c) for s, c in zip(rows.set_id, rows.concepts)}
    for model in ("gpt-4-0613", "turnopt"):
        spec = load_models(PARAMS_DIR / "reference-models.yaml")[f"ref-{model}"]
        assert (
            len(read_set_answers(COMMONGEN_EVAL_5CONCEPT, spec.replay.model, concepts=sets)) == 208
        )
