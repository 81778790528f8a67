"""Every shipped run file runs after any other: each writes into its own
outputs folder, and a run that would share one with another experiment is told how to choose
another folder."""

import shlex
import sys
from pathlib import Path

import yaml

from ocg.cli import main
from ocg.config.model_registry import MODELS_FILE, load_models, parse_models
from ocg.core.paths import PARAMS_DIR, outputs_dir
from ocg.jobs.pipeline import load_run
from ocg.scoring.judging import judge_spec
from tests.hostile.cases import cli, models_file

RUN_FILES = sorted((PARAMS_DIR / "runs").glob("*.yaml"))


def test_every_shipped_run_file_writes_into_a_folder_of_its_own(outputs):
    """A model's generations folder holds one instance set per condition: two shipped runs of one
    model with other concept sets, templates or permutations in one folder refuse each other."""
    folders = {path.name: Path(load_run(path).file.outputs or outputs_dir()) for path in RUN_FILES}
    assert len(RUN_FILES) >= 4 and len(set(folders.values())) == len(folders), folders
    assert folders["judge.yaml"] != folders["demo.yaml"]


def test_the_judge_run_judges_in_process_with_the_embedded_model():
    """params/runs/judge.yaml: its judge, from its own models file, is the embedded model run in
    process under the verdict grammar (offline, no server); the served variant beside it names
    `transformers serve`, found beside the Python ocg runs in."""
    run = load_run(PARAMS_DIR / "runs" / "judge.yaml")
    judges = PARAMS_DIR / "judge-models.yaml"
    assert run.file.scoring["judge_models_file"] == run.scoring.judge_models_file == str(judges)
    assert {"ordered", "original"} <= set(run.file.conditions)
    spec = judge_spec(run.scoring.judge, run.scoring.judge_models_file)
    assert spec.backend == "transformers" and spec.id == "embedded:smollm2-135m-instruct"
    assert spec.dtype == "float32" and spec.quantization == "none" and spec.max_new_tokens == 64
    served = judge_spec("smollm2-135m-judge-served", str(judges))
    shell, flag, script = shlex.split(served.api.server.command)
    assert (shell, flag) == ("sh", "-c") and "transformers serve --device cpu" in script
    assert "{port}" in served.api.base_url and served.api.key_env is None
    assert (Path(sys.executable).parent / "transformers").exists()  # installed with ocg
    shipped = load_models(MODELS_FILE)
    assert all(load_models(judges)[name] == spec for name, spec in shipped.items())


def test_the_judge_models_files_commented_examples_are_valid_entries():
    """The vLLM and hosted-API judges its comments show parse as they are written there."""
    lines = (PARAMS_DIR / "judge-models.yaml").read_text().splitlines()
    examples = [line[4:] for line in lines if line.startswith("  #   ")]
    specs = parse_models({"models": yaml.safe_load("\n".join(examples))}, "comments")
    assert len(specs) == 2 and {s.backend for s in specs.values()} == {"openai"}
    hosted = [s for s in specs.values() if s.api.server is None]
    assert len(hosted) == 1 and hosted[0].api.key_env  # its key from the environment


def test_a_run_asking_other_instances_in_a_used_folder_is_told_how_to_choose_another(
    tmp_path, capsys
):
    models = models_file(tmp_path, "{id: x/y, backend: replay}")
    args = [
        "generate",
        "m",
        "--models-file",
        models,
        "--out",
        tmp_path / "gen",
        "--subset-k",
        1,
        "--conditions",
        "ordered",
        "--templates",
        0,
    ]
    assert main([str(a) for a in args]) == 0
    capsys.readouterr()
    code, err = cli(capsys, *args, 1)  # templates 0 and 1: another instance set
    assert code == 2 and err.startswith(
        f"ocg: error: {tmp_path / 'gen' / 'm' / 'run_card.json'}: "
    ), err
    assert (
        "holds another instance set" in err and "`outputs:` key" in err and "OCG_OUTPUTS" in err
    ), err
    assert "--out" in err, err
