"""The parameter files' pydantic models (ocg/config/) and the JSON Schemas exported from them
(params/schema/): current, named by every shipped YAML file, and able to refuse a bad file."""

import json
import typing
from pathlib import Path

import jsonschema
import pytest
import yaml

from ocg.config.file_model import validate
from ocg.config.model_registry import parse_models
from ocg.config.models_file import ModelDefaults, TransformersEntry
from ocg.config.run_file import RunFile
from ocg.core.errors import OcgInputError
from ocg.core.paths import PARAMS_DIR
from ocg.jobs import schema_export as export
from ocg.metrics import coverage
from tests.config.bad_params import BAD_RUN_FIELDS

SHIPPED = sorted(
    [*PARAMS_DIR.glob("*.yaml"), *PARAMS_DIR.glob("runs/*.yaml"), *PARAMS_DIR.glob("sweeps/*.yaml")]
)


def kind_of(path: Path) -> str:
    """A run or sweep by its folder; a models file also by its name (judge-models.yaml)."""
    by_folder = {"runs": "run", "sweeps": "sweep"}.get(path.parent.name)
    return by_folder or ("models" if path.stem.endswith("-models") else path.stem)


def validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(export.schema_path(kind).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_exported_schemas_are_current(tmp_path):
    """`python -m ocg.jobs.schema_export` was run after the models last changed (else: run it)."""
    written = export.write_schemas(tmp_path)
    assert {p.name for p in written} == {p.name for p in export.SCHEMA_DIR.glob("*.json")}
    for path in written:
        assert path.read_text() == (export.SCHEMA_DIR / path.name).read_text(), path.name


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(PARAMS_DIR)))
def test_each_shipped_yaml_names_its_schema_and_validates_against_it(path):
    """As an editor checks it: the file on its own (a sweep that `extends` another needs only a
    name of its own in the schema; ocg/config/sweep_file.py, _file_schema), not the merged chain."""
    first = path.read_text().splitlines()[0]
    schema = export.schema_path(kind_of(path))
    relative = Path(*[".."] * (len(path.relative_to(PARAMS_DIR).parts) - 1), "schema", schema.name)
    assert first == f"# yaml-language-server: $schema={relative.as_posix()}"
    assert (path.parent / relative).resolve() == schema.resolve()
    errors = [
        e.message for e in validator(kind_of(path)).iter_errors(yaml.safe_load(path.read_text()))
    ]
    assert not errors, errors


BAD = [  # (kind, a shipped file, a change that an editor must flag)
    ("run", "runs/demo.yaml", {"subset_k": True}),  # a YAML true is no number
    ("run", "runs/demo.yaml", {"sudset_k": 2}),  # an unknown key
    ("sweep", "sweeps/demo.yaml", {"resources": {"default": {"gpus": "two"}}}),
    ("models", "models.yaml", {"models": {"m": {"id": "a/b", "quantisation": "4bit"}}}),
    ("scoring", "scoring.yaml", {"spacy_pipeline": "full"}),
    ("templates", "templates.yaml", {"conditions": {"x": {"text": "ordered"}}}),  # shot missing
]


@pytest.mark.parametrize("kind, name, change", BAD)
def test_a_schema_refuses_a_bad_file(kind, name, change):
    raw = {**yaml.safe_load((PARAMS_DIR / name).read_text()), **change}
    assert list(validator(kind).iter_errors(raw))


def test_a_sweep_without_extends_must_name_its_models_and_outputs():
    raw = yaml.safe_load((PARAMS_DIR / "sweeps/demo.yaml").read_text())
    del raw["outputs"]
    assert list(validator("sweep").iter_errors(raw))


def test_every_field_is_described():
    undescribed = [
        f"{model.__name__}.{name}"
        for model in export.KINDS.values()
        for sub in [model, *_nested(model)]
        for name, info in sub.model_fields.items()
        if not info.description
    ]
    assert not undescribed, undescribed


def _nested(model) -> set:
    found = set()
    for info in model.model_fields.values():
        for arg in _types(info.annotation):
            if isinstance(arg, type) and hasattr(arg, "model_fields") and arg not in found:
                found |= {arg, *_nested(arg)}
    return found


def _types(annotation) -> list:
    return [annotation, *(t for a in typing.get_args(annotation) for t in _types(a))]


def test_an_entry_silent_on_a_field_gets_the_schemas_default():
    """One class, its defaults written once: the loaded entry is the schema's model."""
    spec = parse_models({"models": {"m": {"id": "a/b"}}}, "f")["m"]
    assert type(spec) is TransformersEntry and spec.name == "m"
    for name, info in ModelDefaults.model_fields.items():
        want = "a/b" if name == "paper_id" else info.default  # paper_id: the id, where unsaid
        assert getattr(spec, name) == want, name
    with pytest.raises(Exception, match="frozen"):
        spec.batch_size = 8  # what validation returned is what every consumer reads


def test_an_entry_names_itself_by_its_key_only():
    with pytest.raises(OcgInputError, match=r"f: models.m.name: unknown key; known: \['answer_"):
        parse_models({"models": {"m": {"id": "a/b", "name": "other"}}}, "f")
    assert (
        "name"
        not in json.loads(export.schema_path("models").read_text())["$defs"]["ModelEntry"][
            "properties"
        ]
    )


def test_the_run_card_records_an_entry_as_it_always_did():
    """An openai entry's api block: every field up to base_url, then those the file set (cards
    written before takes_seed, regex_param and server existed read the same)."""
    api = {"base_url": "http://h/v1", "key_env": "K", "server": {"command": "s {port}"}}
    spec = parse_models({"models": {"m": {"backend": "openai", "id": "x", "api": api}}}, "f")["m"]
    card = spec.recorded()
    assert list(card)[:3] == ["name", "id", "backend"] and list(card)[-2:] == ["api", "replay"]
    assert list(card["api"]) == [
        *("key_env", "concurrency", "timeout_s", "max_retries", "temperature", "backoff_s"),
        *("token_param", "max_retry_wait_s", "base_url", "server"),
    ]
    assert card["api"]["server"] == {"startup_timeout_s": 600, "command": "s {port}"}
    assert card["replay"] == {} and card["quantization"] == "none" and card["batch_check"] == 0


def test_the_schemas_choices_are_the_metrics_and_families_own():
    """One list each (ocg/metrics, ocg/scoring), which the schemas are filled from: a run file's
    metrics and its scoring block's choices too."""
    from ocg.scoring.families import FAMILIES

    scoring = export.schema_of("scoring")["properties"]
    assert scoring["spacy_pipeline"]["enum"] == list(coverage.SPACY_PIPELINES)
    assert scoring["matching_rule"]["enum"] == list(coverage.MATCHING_RULES)
    assert scoring["metrics"]["items"]["enum"] == list(FAMILIES)
    run = export.schema_of("run")["properties"]
    assert run["metrics"]["anyOf"][0]["items"]["enum"] == list(FAMILIES)
    assert "ocg choices" not in json.dumps([export.schema_of(k) for k in export.KINDS])


def test_the_loader_refuses_a_choice_the_metrics_do_not_know():
    from ocg.scoring.settings import load_scoring_config

    for key, known in [
        ("spacy_pipeline", "as_shipped, no_parser"),
        ("matching_rule", ", ".join(coverage.MATCHING_RULES)),
    ]:
        with pytest.raises(OcgInputError) as info:
            load_scoring_config(overrides={key: "full"})
        assert info.value.where.endswith(f"scoring.yaml: {key}")
        assert info.value.problem == f"got 'full'; expected one of {known}"


@pytest.mark.parametrize("change, where, what", BAD_RUN_FIELDS)
def test_pydantic_errors_read_as_ocg_errors(change, where, what):
    raw = {"name": "r", "models": ["a"], "conditions": ["ordered"], **change}
    with pytest.raises(OcgInputError) as info:
        validate(RunFile, raw, "f:")
    assert info.value.where == where and info.value.problem.startswith(what), info.value


def test_n_concepts_literal_spells_the_tuple():
    """run_file.NConcepts writes core's N_CONCEPTS out (a Literal type checkers read): the same."""
    from ocg.config.run_file import NConcepts
    from ocg.core.frames import N_CONCEPTS

    assert typing.get_args(NConcepts) == N_CONCEPTS
