"""Answers made through inspect and imported give the same report as the same answers replayed
directly; inspect's own command line on the embedded model through its transformers provider."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ocg.cli import main

from .conftest import run_inspect

pytestmark = pytest.mark.slow


def test_imported_answers_report_as_the_same_answers_replayed(tmp_path, monkeypatch, capsys):
    log = run_inspect(tmp_path / "logs")
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "imported"))
    assert main(["import", log.location, "--name", "m"]) == 0
    run_file = tmp_path / "imported" / "imports" / "m" / "run.yaml"
    assert main(["report", str(run_file)]) == 0

    direct = tmp_path / "direct"
    direct.mkdir()
    with (direct / "answers.jsonl").open("w") as fh:
        for s in log.samples:
            fh.write(json.dumps({"instance_id": s.id, "answer": s.output.completion}) + "\n")
    (direct / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "models": {
                    "m": {
                        "backend": "replay",
                        "id": "mockllm/model",  # the id the import records (paper_id)
                        "replay": {"file": "answers.jsonl"},
                    }
                }
            }
        )
    )
    run = yaml.safe_load(run_file.read_text()) | {"outputs": str(direct / "outputs")}
    (direct / "run.yaml").write_text(yaml.safe_dump(run))
    monkeypatch.setenv("OCG_OUTPUTS", str(direct / "outputs"))
    assert main(["report", str(direct / "run.yaml")]) == 0
    capsys.readouterr()
    a = tmp_path / "imported" / "reports" / "m"
    b = direct / "outputs" / "reports" / "m"
    assert main(["compare-reports", str(a), str(b)]) == 0, capsys.readouterr().out


def test_inspect_command_line_on_the_embedded_model(tmp_path, capsys):
    from ocg.weights.embedded import ensure_converted

    folder = ensure_converted("smollm2-135m-instruct")
    logs = tmp_path / "logs"
    subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "ocg/ordered_commongen",
         "--model", "hf/local", "-M", f"model_path={folder}", "-M", "do_sample=false",
         "-M", "device=cpu", "-T", "conditions=ordered", "-T", "subset=1", "-T", "templates=0",
         "-T", "permutations=1", "--max-tokens", "16", "--log-dir", str(logs), "--display", "none"],
        check=True, capture_output=True, text=True, timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    (path,) = logs.glob("*.eval")
    assert main(["import", str(path), "--name", "smol"]) == 0
    assert "1 answers imported" in capsys.readouterr().out
