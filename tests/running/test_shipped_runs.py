"""Every shipped run file runs after any other (issue 46, item 1): each writes into its own
outputs folder, and a run that would share one with another experiment is told how to choose
another folder."""

from pathlib import Path

from ocg.cli import main
from ocg.paths import PARAMS_DIR, outputs_dir
from ocg.pipeline import load_run
from tests.hostile import cli, models_file

RUN_FILES = sorted((PARAMS_DIR / "runs").glob("*.yaml"))


def test_every_shipped_run_file_writes_into_a_folder_of_its_own(outputs):
    """A model's generations folder holds one instance set per condition: two shipped runs of one
    model with other concept sets, templates or permutations in one folder refuse each other."""
    folders = {path.name: Path(load_run(path)["outputs"] or outputs_dir()) for path in RUN_FILES}
    assert len(RUN_FILES) >= 3 and len(set(folders.values())) == len(folders), folders


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
