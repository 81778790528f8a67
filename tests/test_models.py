"""params/models.yaml: the paper's models are there; bad entries give errors naming model and field."""

import csv

import pytest
import yaml

from ocg.errors import OcgInputError
from ocg.models import MODELS_FILE, get_model, load_models, parse_models
from ocg.paths import PAPER_TABLES_DIR


def test_every_paper_model_is_an_entry():
    models = load_models()
    with open(PAPER_TABLES_DIR / "paper_table1_zero_shot.csv") as fh:
        paper = {(r["model"], r["hf_id"]) for r in csv.DictReader(fh)}
    assert len(paper) == 36
    by_paper_name = {m.paper_name: m for m in models.values() if m.paper_name}
    for name, hub_id in paper:
        assert by_paper_name[name].paper_key == hub_id, name
    assert models["marco-o1"].answer_extraction == "marco_o1"
    assert models["marco-o1"].base_model == "qwen2-7b"
    assert models["smollm2-135m-instruct"].id == "embedded:smollm2-135m-instruct"
    assert sum(m.trust_remote_code for m in models.values()) == 1  # phi3-small only
    assert all(m.api["key_env"].endswith("_API_KEY") for m in models.values() if m.backend == "openai")


def _raw(entry):
    return {"defaults": {"max_new_tokens": 64}, "models": {"m": entry}}


@pytest.mark.parametrize("entry, where, what", [
    ({"id": "x/y", "temprature": 0}, "models.m.temprature", "unknown field"),
    ({"revision": "main"}, "models.m.id", "missing"),
    ({"id": "x/y", "quantization": "3bit"}, "models.m.quantization", "expected one of none, 4bit, 8bit"),
    ({"id": "x/y", "batch_size": 0}, "models.m.batch_size", "positive integer"),
    ({"id": "x/y", "trust_remote_code": "yes"}, "models.m.trust_remote_code", "expected bool"),
    ({"id": "x/y", "answer_extraction": "regex"}, "models.m.answer_extraction", "expected one of"),
    ({"id": "gpt", "backend": "openai", "api": {"base_url": "https://x"}}, "models.m.api.key_env", "missing"),
    ({"id": "gpt", "backend": "openai", "api": {"base_url": "ftp://x", "key_env": "K"}},
     "models.m.api.base_url", "http(s) URL"),
    ({"id": "x/y", "base_model": "nope"}, "models.m.base_model", "not an entry"),
])
def test_bad_entries_name_model_and_field(entry, where, what):
    with pytest.raises(OcgInputError) as info:
        parse_models(_raw(entry), "models.yaml")
    assert f"models.yaml: {where}" in str(info.value) and what in str(info.value)


def test_defaults_apply_and_trust_remote_code_is_off():
    spec = parse_models(_raw({"id": "x/y"}), "f")["m"]
    assert spec.max_new_tokens == 64 and spec.trust_remote_code is False


def test_unknown_model_name_suggests_close_ones(tmp_path):
    with pytest.raises(OcgInputError, match=r"unknown model 'qwen2.5-7B'; did you mean qwen2.5-7b"):
        get_model("qwen2.5-7B")


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "models.yaml"
    raw = yaml.safe_load(MODELS_FILE.read_text())
    raw["models"]["gemma2-2b"]["dtype"] = "fp8"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(OcgInputError, match=rf"{bad}: models.gemma2-2b.dtype: got 'fp8'"):
        load_models(bad)
