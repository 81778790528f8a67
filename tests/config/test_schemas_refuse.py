"""The JSON Schemas (params/schema/) refuse every hostile parameter file of the tests that the
loader refuses (an editor shows it as wrong), or BEYOND says why JSON Schema cannot; and they
accept every file the loader accepts (the shipped ones, and odd but valid values)."""

import datetime
import json
import random

import jsonschema
import pytest
import yaml

from ocg.config.model_registry import load_models, parse_models
from ocg.core.errors import OcgInputError
from ocg.core.names import NAME_PATTERN, check_name
from ocg.core.paths import PARAMS_DIR, TEMPLATES_FILE
from ocg.core.yaml_files import parse_yaml
from ocg.data import load_templates
from ocg.jobs import schema_export as export
from ocg.jobs.pipeline import load_run
from ocg.scoring.settings import load_scoring_config
from ocg.sweep import load_sweep
from tests.config.bad_params import (
    BAD_ENTRIES,
    BAD_NAMES,
    BAD_RUN_FIELDS,
    BAD_RUNS,
    BAD_SLURM,
    BAD_TEMPLATES,
    MODEL_ENTRIES,
    NEW_BAD,
)

DEMO_RUN = yaml.safe_load((PARAMS_DIR / "runs/demo.yaml").read_text())
DEMO_SWEEP = yaml.safe_load((PARAMS_DIR / "sweeps/demo.yaml").read_text())
SCORING = yaml.safe_load((PARAMS_DIR / "scoring.yaml").read_text())
TEMPLATES = yaml.safe_load(TEMPLATES_FILE.read_text())


def editor_reads(raw):
    """The file as an editor's YAML 1.2 reads it: an unquoted date is text, every key is text."""
    if isinstance(raw, dict):
        return {str(k): editor_reads(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [editor_reads(v) for v in raw]
    return raw.isoformat() if isinstance(raw, datetime.date) else raw


def schema_errors(kind: str, raw) -> list[str]:
    schema = json.loads(export.schema_path(kind).read_text())
    checker = (
        jsonschema.Draft202012Validator.FORMAT_CHECKER
    )  # `format: date` checked, as editors do
    validator = jsonschema.Draft202012Validator(schema, format_checker=checker)
    return [e.message for e in validator.iter_errors(editor_reads(raw))]


def model_cases():
    """(id, kind, the file's contents) of the tests' hostile models files."""
    for entry, where, what in BAD_ENTRIES:
        yield (
            f"{where}: {what}",
            "models",
            {"defaults": {"max_new_tokens": 64}, "models": {"m": entry}},
        )
    for name in BAD_NAMES:
        yield f"models.{name!r}", "models", {"models": {name: {"id": "x/y"}}}
    for entry, where, what in MODEL_ENTRIES:
        yield f"{where}: {what}", "models", {"models": {"m": parse_yaml(entry)}}


def file_cases():
    """(id, kind, the file's contents) of the tests' other hostile parameter files."""
    for changes, where, what in BAD_RUNS:
        yield f"run {where}: {what}", "run", {**DEMO_RUN, **changes}
    for change, where, what in BAD_RUN_FIELDS:
        raw = {"name": "r", "models": ["a"], "conditions": ["ordered"], **change}
        yield f"{where}: {what}", "run", raw
    for slurm, where, what in BAD_SLURM:
        raw = json.loads(json.dumps(DEMO_SWEEP))
        raw["slurm"] = {**raw.get("slurm", {}), **slurm}
        yield f"{where}: {what}", "sweep", raw
    for key, value in (("time", "1 hour"), ("mem", "lots"), ("cpus", 0)):
        raw = json.loads(json.dumps(DEMO_SWEEP))
        raw["resources"]["default"][key] = value
        yield f"resources.default.{key}: {value}", "sweep", raw
    for change, where, what in BAD_TEMPLATES:
        text = TEMPLATES_FILE.read_text().replace(*change)
        if "old_templates" in text:
            text = text.replace("old_templates:\n", "").split("templates: {}\n")[0]
            text += "templates: {}\n"
        yield f"{where}: {what}", "templates", parse_yaml(text)
    bases = {"run": DEMO_RUN, "sweep": DEMO_SWEEP, "scoring": SCORING, "templates": TEMPLATES}
    for kind, base, change, what in NEW_BAD:
        yield what, kind, {**bases.get(base, {}), **change}


CASES = [*model_cases(), *file_cases()]

# What the loader refuses and JSON Schema cannot say, by case id, with the reason.
CROSS_FILE = "names another file's content (the models file's entries, templates' conditions)"
BEYOND = {
    "models.m.base_model: not an entry": "base_model names another entry of the file: cross-field",
    "models.m.api: missing: the openai backend needs": "the backend decides: cross-field",
    "models.m.attention: the server's": "the backend decides which fields apply: cross-field",
    "models.m.attention: does not apply": "the backend decides which fields apply: cross-field",
    "models.m.generation_overrides: API models decode": "the backend decides: cross-field",
    "models.m.quantization: an entry that sets dtype must say its quantization": (
        "a field's absence where another is set: cross-field"
    ),
    "models.m.generation_overrides.repetition_penalti: not a transformers GenerationConfig "
    "setting": "transformers' GenerationConfig, read where ocg runs",
    "models.m.generation_overrides.repetition_penalty: expected float": (
        "transformers' GenerationConfig, read where ocg runs"
    ),
    "models.m.generation_overrides.do_sample: fixed by ocg": (
        "transformers' GenerationConfig's settings beside ocg's own"
    ),
    "models.m.generation_overrides.repetition_penalty: expected a finite number": (
        "transformers' GenerationConfig's settings; and YAML's .nan is no JSON value"
    ),
    "models.m.api.server.command: cannot be split into words": "a shell's quoting rules",
    "models.m.id: no embedded model 'no-such-model'": "the models a Python package ships",
    "models.m.api.temperature: expected a finite number": "YAML's .nan is no JSON value",
    "models.m.replay.rates.degenerate: expected a finite number": "YAML's .nan is no JSON value",
    "run models[0]: is not an entry of": CROSS_FILE,
    "run conditions[1]: unknown condition 'reversed'": CROSS_FILE,
    "run template_ids[1]: unknown template id 9": CROSS_FILE,
    "run scoring.judge: unknown model 'no-such-judge'": CROSS_FILE,
    "run table7_pairs.marco-o1: 'marco-o1' is not a model of this file": (
        "names the file's own models: cross-field"
    ),
    "a setup line that is not bash": "bash's grammar",
    "templates.0.original: format spec or conversion": "Python's format-string grammar",
    "templates.1.original: expected a plain {concepts}": "Python's format-string grammar",
    "a float with an integral value (3.0) for an integer": (
        "JSON Schema's data model has one number: 3.0 is an integer there"
    ),
}


@pytest.mark.parametrize("case, kind, raw", CASES, ids=[c[0] for c in CASES])
def test_the_schema_refuses_what_the_loader_refuses(tmp_path, case, kind, raw):
    with pytest.raises(OcgInputError):
        load(tmp_path, kind, raw)
    if case in BEYOND:
        assert not schema_errors(kind, raw), f"{case}: now refused; take it out of BEYOND"
    else:
        assert schema_errors(kind, raw), case


def test_every_exception_is_a_case():
    assert set(BEYOND) <= {c[0] for c in CASES}


def load(tmp_path, kind: str, raw):
    """The file through ocg's own loader for its kind."""
    path = tmp_path / f"{kind}.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True))
    if kind == "models":
        return parse_models(raw, str(path))
    if kind == "run":
        return load_run(path)
    if kind == "sweep":
        return load_sweep(path)
    if kind == "scoring":
        return load_scoring_config(path)
    return load_templates(path)


SHIPPED = sorted(
    [*PARAMS_DIR.glob("*.yaml"), *PARAMS_DIR.glob("runs/*.yaml"), *PARAMS_DIR.glob("sweeps/*.yaml")]
)


def kind_of(path) -> str:
    by_folder = {"runs": "run", "sweeps": "sweep"}.get(path.parent.name)
    return by_folder or ("models" if path.stem.endswith("-models") else path.stem)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(PARAMS_DIR)))
def test_no_file_the_loader_takes_is_refused_by_its_schema(path):
    kind = kind_of(path)
    loaders = {"models": load_models, "run": load_run, "sweep": load_sweep}
    loaders.get(kind, {"scoring": load_scoring_config, "templates": load_templates}.get(kind))(path)
    assert not schema_errors(kind, yaml.safe_load(path.read_text()))


GOOD_ENTRIES = [  # odd but valid: the loader and the schema take each
    {"id": "a/b", "prompt_date": datetime.date(2025, 1, 1)},  # unquoted, as documented
    {"id": "a/b", "prompt_date": "2024-02-29"},
    {"id": "embedded:smollm2-135m-instruct", "revision": "0123abc"},
    {"id": "x", "backend": "openai", "api": {"base_url": "http://[::1]:8000/v1", "key_env": "_K1"}},
    {"id": "x", "backend": "openai", "api": {"base_url": "https://h:65535"}},
    {
        "id": "x",
        "backend": "openai",
        "api": {"base_url": "http://127.0.0.1:{port}/v1", "server": {"command": "vllm"}},
    },
    {"id": "r", "backend": "replay", "replay": {"rates": {"drop": 1, "reorder": 0.5}}},
    {"id": "x/y", "max_new_tokens": 65536, "paper_name": "Mödel 7B"},
]


@pytest.mark.parametrize("entry", GOOD_ENTRIES)
def test_odd_but_valid_entries_pass_both(entry):
    raw = {"models": {"m-nan1": entry}}
    parse_models(raw, "f")
    assert not schema_errors("models", raw)


@pytest.mark.parametrize(
    "slurm",
    [{"analysis": {"time": t}} for t in ("UNLIMITED", "infinite", "0", "1-23:59:59", "100:59:59")]
    + [{"env": {"_A1": 3, "B": "x y"}}, {"extra_args": ["--qos=high", "-p", "gpu"]}],
)
def test_odd_but_valid_slurm_settings_pass_both(tmp_path, slurm):
    raw = {**DEMO_SWEEP, "slurm": {**DEMO_SWEEP.get("slurm", {}), **slurm}}
    load(tmp_path, "sweep", raw)
    assert not schema_errors("sweep", raw)


def test_the_name_pattern_is_check_name():
    """NAME_PATTERN (the schemas') takes exactly what check_name takes: over many strings of the
    characters where the rules differ (digits, '.', '_', '-', e and the NA words' letters)."""
    rng, letters = random.Random(7), "aAeE0159._-nNfFiItTuUlLyY \n/"
    strings = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 9))) for _ in range(30000)]
    strings += ["nan", "NaN", "1e5", "1_000", "007", "m-007", "a..b", "a" * 128, "a" * 129, "ok\n"]
    for text in strings:
        try:
            check_name("", text)
            takes = True
        except OcgInputError:
            takes = False
        schema = jsonschema.Draft202012Validator({"pattern": NAME_PATTERN})
        assert takes == schema.is_valid(text), repr(text)
