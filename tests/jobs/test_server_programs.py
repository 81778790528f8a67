"""A server command's programs are found before any work (the venv's own bin beside
sys.executable first, then PATH): a missing one is refused when the run file is read, naming the
command, instead of after the generation it would follow."""

import sys
from pathlib import Path

import pytest
import yaml

from ocg.core.errors import OcgInputError
from ocg.generation.servers.server import programs, resolve_program
from ocg.jobs.run_checks import check_run
from tests.hostile.cases import cli

SERVED = {
    "backend": "openai",
    "id": "x/y",
    "api": {"base_url": "http://127.0.0.1:{port}/v1", "server": {"command": None}},
}


def _run(tmp_path, command: str, as_judge: bool) -> Path:
    entry = {**SERVED, "api": {**SERVED["api"], "server": {"command": command}}}
    models = {"served": entry, "m": {"backend": "replay", "id": "x/z"}}
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"models": models}))
    run = {
        "name": "r",
        "models_file": "models.yaml",
        "models": ["m"] if as_judge else ["served"],
        "conditions": ["ordered"],
        **({"scoring": {"judge": "served"}} if as_judge else {}),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.mark.parametrize("as_judge", [False, True])
@pytest.mark.parametrize(
    ("command", "missing"),
    [
        ("no-such-server-9f2 serve {id} --port {port}", "no-such-server-9f2"),
        (
            "sh -c 'mkdir -p /tmp/x && exec env A=1 no-such-server-9f2 serve --port {port}'",
            "no-such-server-9f2",
        ),
    ],
)
def test_a_missing_server_program_is_refused_before_any_work(tmp_path, command, missing, as_judge):
    path = _run(tmp_path, command, as_judge)
    with pytest.raises(OcgInputError, match=rf"api.server.command.*'{missing}'.*neither beside"):
        check_run(yaml.safe_load(path.read_text()), path)


def test_ocg_report_refuses_it_with_exit_2_naming_the_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "out"))
    path = _run(tmp_path, "no-such-server-9f2 serve {id}", as_judge=True)
    code, err = cli(capsys, "report", path)
    assert code == 2 and "no-such-server-9f2 serve x/y" in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))


def test_the_venvs_own_programs_are_found_without_an_activated_venv(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    found = resolve_program("transformers")
    assert found == str(Path(sys.executable).parent / "transformers")
    assert resolve_program("no-such-server-9f2") is None
    assert programs(["vllm", "serve", "m"]) == ["vllm"]
    assert programs(["sh", "-c", "X=1 exec env OMP_NUM_THREADS=1 transformers serve; cd /"]) == [
        "sh",
        "transformers",
    ]
