"""Where a relative path points (docs/sweeps.md, "Where relative paths point"): a path written in a params
file is that file's, `outputs:` the outputs' root, a path on the command line the working
directory's; each key's own comment says so too."""

import re
import subprocess
import sys

import yaml

from ocg.cli import main
from ocg.config.model_registry import load_models
from ocg.core.paths import PARAMS_DIR, PROJECT_ROOT
from ocg.jobs.run_checks import check_run


def test_the_rule_is_written_once_and_where_each_key_is_documented():
    readme = (PROJECT_ROOT / "docs" / "sweeps.md").read_text()
    rule = readme.split("**Where relative paths point**", 1)[1].split("\n\n", 1)[0]
    for key in ("extends:", "models_file:", "outputs:", "--models-file", "load_scores"):
        assert key in rule, key
    models_yaml = (PARAMS_DIR / "models.yaml").read_text()
    assert re.search(r"`extends: <another models file>` \(relative to the file", models_yaml)
    for name in ("paper", "paper-table4", "paper-table7"):
        assert "relative: to this file" in (PARAMS_DIR / "sweeps" / f"{name}.yaml").read_text()
    help_text = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "generate", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
    ).stdout
    assert "relative: to the working directory" in " ".join(help_text.split())


def test_the_replay_rates_example_in_the_models_file_is_a_valid_entry(tmp_path):
    """The comment shows the level `rates:` sits at (under `replay:`); its example loads as written."""
    models_yaml = (PARAMS_DIR / "models.yaml").read_text()
    example = re.search(r"#\s+(my-replay: \{.*\})\n", models_yaml).group(1)
    (tmp_path / "m.yaml").write_text("models:\n  " + example + "\n")
    spec = load_models(tmp_path / "m.yaml")["my-replay"]
    assert spec.replay.rates == {"reorder": 0.3, "drop": 0.05}


def test_each_base_is_as_documented(tmp_path, monkeypatch, capsys):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "base.yaml").write_text((PARAMS_DIR / "models.yaml").read_text())
    (tmp_path / "a" / "b" / "mine.yaml").write_text(
        "extends: ../base.yaml\nmodels:\n  mine: {id: embedded:smollm2-135m-instruct, quantization: none}\n"
    )
    (tmp_path / "a" / "run.yaml").write_text(
        "name: r\nmodels_file: b/mine.yaml\nmodels: [mine]\nconditions: [ordered]\n"
    )
    monkeypatch.chdir(tmp_path)  # none of these is relative to the working directory
    assert "mine" in load_models(
        tmp_path / "a" / "b" / "mine.yaml"
    )  # extends: the models file's folder
    run = check_run(
        yaml.safe_load((tmp_path / "a" / "run.yaml").read_text()), tmp_path / "a" / "run.yaml"
    )
    assert run.file.models_file == str(
        tmp_path / "a" / "b" / "mine.yaml"
    )  # models_file: the run file's
    assert (
        main(["models", "--models-file", "a/b/mine.yaml"]) == 0
    )  # the command line: the working directory's
    assert "mine" in capsys.readouterr().out
