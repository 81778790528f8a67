"""params/models.yaml: the paper's models are there; bad entries give errors naming model and field."""

import csv

import pytest
import yaml

from ocg.config.model_registry import MODELS_FILE, get_model, load_models, parse_models
from ocg.core.errors import OcgInputError
from ocg.core.paths import PAPER_TABLES_DIR
from tests.config.bad_params import BAD_ENTRIES, BAD_NAMES

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)


def test_every_paper_model_is_an_entry():
    models = load_models()
    with open(PAPER_TABLES_DIR / "paper_table1_zero_shot.csv") as fh:
        paper = {(r["model"], r["hf_id"]) for r in csv.DictReader(fh)}
    assert len(paper) == 36
    by_paper_name = {m.paper_name: m for m in models.values() if m.paper_name}
    for name, hub_id in paper:
        assert by_paper_name[name].paper_id == hub_id, name
    assert models["marco-o1"].answer_extraction == "marco_o1"
    assert models["marco-o1"].base_model == "qwen2-7b"
    assert models["smollm2-135m-instruct"].id == "embedded:smollm2-135m-instruct"
    assert sum(m.trust_remote_code for m in models.values()) == 1  # phi3-small only
    assert all(m.api.key_env.endswith("_API_KEY") for m in models.values() if m.backend == "openai")


def _raw(entry):
    return {"defaults": {"max_new_tokens": 64}, "models": {"m": entry}}


@pytest.mark.parametrize(
    "entry, where, what",
    BAD_ENTRIES,
)
def test_bad_entries_name_model_and_field(entry, where, what):
    with pytest.raises(OcgInputError) as info:
        parse_models(_raw(entry), "models.yaml")
    assert f"models.yaml: {where}" in str(info.value) and what in str(info.value)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_model_names_cannot_escape_the_outputs_folder(name):
    with pytest.raises(OcgInputError, match="a name must start with a letter or digit"):
        parse_models({"models": {name: {"id": "x/y"}}}, "models.yaml")


def test_duplicate_keys_are_refused(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  a: {id: x/y}\n  b: {id: x/z}\n  a: {id: x/w}\n")
    with pytest.raises(OcgInputError, match=r"found duplicate key 'a' \(first on line 2\)"):
        load_models(path)


def test_non_utf8_file_names_the_byte(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_bytes(b'models:\n  a: {id: "x\xff"}\n')
    with pytest.raises(OcgInputError, match=rf"{path}: not UTF-8 text: byte 20 is 0xff"):
        load_models(path)


def test_paper_choices_are_in_the_entries():
    models = load_models()
    assert models["o1-mini"].system_mode == "folded"
    assert models["marco-o1"].system_prompt == "paper"
    assert all(m.prompt_date == "2024-07-26" and m.decoding == "greedy" for m in models.values())


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


def test_a_models_file_extends_another_without_copying_it(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text("defaults: {max_new_tokens: 64}\nmodels:\n  a: {id: x/a}\n")
    (tmp_path / "sub").mkdir()
    mine = tmp_path / "sub" / "mine.yaml"
    mine.write_text(
        "extends: ../base.yaml\ndefaults: {batch_size: 4}\nmodels:\n  b: {id: x/b, base_model: a}\n"
    )
    specs = load_models(mine)
    assert set(specs) == {"a", "b"} and specs["b"].base_model == "a"
    assert (
        specs["a"].max_new_tokens == 64 and specs["a"].batch_size != 4
    )  # each file's defaults, its own
    assert specs["b"].batch_size == 4 and specs["b"].max_new_tokens != 64


def test_a_dtype_goes_with_a_quantization_said_by_the_entry_or_its_files_defaults():
    """dtype with the quantization said (in the entry or the file's defaults) loads as written."""
    said = parse_models(
        {"models": {"m": {"id": "x/y", "dtype": "float32", "quantization": "4bit"}}}, "f"
    )
    by_defaults = parse_models(
        {"defaults": {"quantization": "none"}, "models": {"m": {"id": "x/y", "dtype": "float32"}}},
        "f",
    )
    assert (said["m"].quantization, said["m"].dtype) == ("4bit", "float32")
    assert (by_defaults["m"].quantization, by_defaults["m"].dtype) == ("none", "float32")


@pytest.mark.parametrize(
    "text, error",
    [
        (
            "extends: base.yaml\nmodels:\n  a: {id: x/other}\n",
            r"mine.yaml: models.a: already an entry of the file this one extends",
        ),
        (
            "extends: nowhere.yaml\nmodels: {}\n",
            r"mine.yaml: extends: no such models file: .*nowhere.yaml",
        ),
        (
            "extends: mine.yaml\nmodels: {}\n",
            r"mine.yaml: extends: mine.yaml extends this file again \(a circle\)",
        ),
        (
            "extends: 3\nmodels: {}\n",
            r"mine.yaml: extends: got 3; expected the path of another models file",
        ),
    ],
)
def test_a_bad_extends_is_refused_naming_it(tmp_path, text, error):
    (tmp_path / "base.yaml").write_text("models:\n  a: {id: x/a}\n")
    (tmp_path / "mine.yaml").write_text(text)
    with pytest.raises(OcgInputError, match=error):
        load_models(tmp_path / "mine.yaml")


def test_a_circle_of_two_files_is_refused(tmp_path):
    (tmp_path / "one.yaml").write_text("extends: two.yaml\nmodels: {}\n")
    (tmp_path / "two.yaml").write_text("extends: one.yaml\nmodels: {}\n")
    with pytest.raises(
        OcgInputError, match=r"extends: one.yaml extends this file again \(a circle\)"
    ):
        load_models(tmp_path / "one.yaml")


def test_methods_states_the_demo_models_token_budget():
    """docs/METHODS.md, "Decoding": the budget it gives for the embedded demo model is the entries'."""
    import re

    from ocg.core.paths import PROJECT_ROOT

    text = (PROJECT_ROOT / "docs" / "METHODS.md").read_text()
    stated = re.search(r"\*\*Budget\.\*\*.*?(\d+) for the embedded demo model", text, re.S)
    models = load_models()
    budgets = {
        models[m].max_new_tokens for m in ("smollm2-135m-instruct", "smollm2-135m-instruct-4bit")
    }
    assert stated and budgets == {int(stated.group(1))}


def test_a_keyless_local_server_needs_no_key_env():
    """A server the user started that takes no key (llama-server, transformers serve): base_url
    alone; no key is sent, and a 401 from it names the field that would give one."""
    from types import SimpleNamespace

    from ocg.generation.backends.openai_status import refusal

    local = {"id": "local", "backend": "openai", "api": {"base_url": "http://127.0.0.1:8000/v1"}}
    spec = parse_models(_raw(local), "models.yaml")["m"]
    assert spec.api.key_env is None and spec.api.server is None
    said = str(refusal(SimpleNamespace(status_code=401, headers={}), "", "http://h/v1", "", spec))
    assert "401 from http://h/v1: it wants a key; name its variable in models.m.api.key_env" in said
