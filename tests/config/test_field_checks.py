"""Field checks of the parameter files: impossible YAML dates, URLs, variable names, bounds, the
file system's root, control characters; each refused in one `ocg: error:` line naming the field."""

import pytest
import yaml

from ocg.config.model_registry import load_models, parse_models
from ocg.core.errors import OcgInputError
from ocg.jobs.pipeline import load_run
from ocg.scoring.settings import load_scoring_config
from ocg.sweep import load_sweep
from tests.hostile.cases import cli, models_file

DEMO = (
    "name: r\nmodels: [smollm2-135m-instruct]\nconditions: [ordered]\nsubset_k: 1\n"
    "template_ids: [0]\n"
)


@pytest.mark.parametrize(
    "entry, where, what",
    [
        ("{id: a/b, prompt_date: 2025-02-30}", "models.m.prompt_date", "got 2025-02-30 (line 2)"),
        ("{id: a/b, prompt_date: '2025-02-30'}", "models.m.prompt_date", "expected an ISO date"),
        ("{id: a/b, prompt_date: '20250101'}", "models.m.prompt_date", "expected an ISO date"),
        ("{id: a/b, revision: ''}", "models.m.revision", "non-blank text without control"),
        ('{id: "a\\e[31mb"}', "models.m.id", "got 'a\\x1b[31mb'; expected a non-blank text"),
        ('{id: a/b, paper_name: "x\\e]0;t\\a"}', "models.m.paper_name", "without control"),
        ("{id: a/b, max_new_tokens: 99999999}", "models.m.max_new_tokens", "at most 65536"),
    ],
)
def test_model_fields_are_refused_in_one_line(tmp_path, capsys, entry, where, what):
    path = models_file(tmp_path, entry)
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: {where}: ") and what in err, err


API = "{{id: x, backend: openai, api: {{base_url: {url}, key_env: {key}}}}}"


@pytest.mark.parametrize(
    "url, key, where, what",
    [
        ("'http://[::1/v1'", "K", "base_url", "not a URL (Invalid IPv6 URL)"),
        ("'http://h:99999/v1'", "K", "base_url", "not a URL (Port out of range"),
        ("'http://h:0/v1'", "K", "base_url", "expected a port from 1 to 65535"),
        ('"http://h/v1\\n"', "K", "base_url", "holds whitespace or a control character"),
        ("'http://h /v1'", "K", "base_url", "holds whitespace"),
        ("'http://h/v1'", "'K=V'", "key_env", "got 'K=V'; expected an environment variable's"),
        ("'http://h/v1'", "''", "key_env", "got ''; expected an environment variable's"),
        ("'http://h/v1'", "1K", "key_env", "not first a digit"),
    ],
)
def test_api_urls_and_key_variables(tmp_path, capsys, url, key, where, what):
    path = models_file(tmp_path, API.format(url=url, key=key))
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: models.m.api.{where}: "), err
    assert what in err, err


def test_a_date_written_unquoted_is_taken_as_documented(tmp_path):
    path = models_file(tmp_path, "{id: a/b, prompt_date: 2025-01-01}")
    assert load_models(path)["m"].prompt_date == "2025-01-01"
    assert parse_models({"models": {"m": {"id": "a/b"}}}, "f")["m"].prompt_date == "2024-07-26"


@pytest.mark.parametrize(
    "line, where, what",
    [
        ("outputs: 2025-13-45", "outputs", "got 2025-13-45 (line 6), which YAML reads as a date"),
        ("outputs: /", "outputs", "the file system's root"),
        ("outputs: /..", "outputs", "the file system's root"),  # resolves to it
        ("samples: 9999", "samples", "expected at most 1000"),
        ("scoring: {spacy_processes: 9999}", "scoring.spacy_processes", "(at most 64)"),
        ("extra: [1, 2025-13-45]", "extra[1]", "no calendar has; write a real date"),
    ],
)
def test_run_fields_are_refused_naming_file_and_field(tmp_path, line, where, what):
    """Through load_run, not `ocg report`: were a check of the root lost, a report would write
    into / (data/, generations/, reports/)."""
    path = tmp_path / "run.yaml"
    path.write_text(DEMO + line + "\n")
    with pytest.raises(OcgInputError) as info:
        load_run(path)
    assert info.value.where == f"{path}: {where}" and what in info.value.problem, info.value


def test_an_impossible_date_is_one_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(DEMO + "outputs: 2025-13-45\n")
    code, err = cli(capsys, "report", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: outputs: got 2025-13-45"), err


def test_spacy_processes_are_bounded_as_auto_is(tmp_path):
    path = tmp_path / "scoring.yaml"
    raw = yaml.safe_load(open("params/scoring.yaml"))
    path.write_text(yaml.safe_dump({**raw, "spacy_processes": 9999}))
    with pytest.raises(OcgInputError, match="spacy_processes: got 9999; expected auto or a"):
        load_scoring_config(path)
    path.write_text(yaml.safe_dump({**raw, "spacy_processes": 64}))
    assert load_scoring_config(path).spacy_processes == 64


def test_a_sweep_never_writes_the_root(tmp_path):
    raw = yaml.safe_load(open("params/sweeps/demo.yaml"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**raw, "outputs": "/"}))
    with pytest.raises(OcgInputError, match=rf"{path}: outputs: got '/': the file system's root"):
        load_sweep(path)


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    """`ocg models` printed an id's ANSI escapes raw; the loader now refuses them in every id or
    name field (shown escaped in the error)."""
    path = models_file(tmp_path, '{id: a/b, paper_id: "x\\e[2J"}')
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and "\x1b" not in err and "\\x1b[2J" in err, err
