"""Run from an installed wheel (no checkout): outputs go to the working directory's outputs/, not
site-packages, and `ocg report` says in one line that it needs a source checkout."""

import ocg.core.paths as paths
import ocg.jobs.notebook_runner
from tests.hostile.cases import cli


def test_a_source_checkout_is_told_from_an_installed_wheel():
    assert paths.SOURCE_CHECKOUT  # the tests run in a checkout: pyproject.toml beside ocg/


def test_an_installed_ocg_writes_under_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("OCG_OUTPUTS")
    monkeypatch.chdir(tmp_path)
    assert paths.outputs_dir() == paths.PROJECT_ROOT / "outputs"  # a checkout: its own outputs/
    monkeypatch.setattr(paths, "SOURCE_CHECKOUT", False)
    assert paths.outputs_dir() == tmp_path / "outputs"
    assert paths.outputs_field("runs/mine") == tmp_path / "runs" / "mine"
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "o"))
    assert paths.outputs_dir() == tmp_path / "o"  # the variable still decides


def test_report_without_notebooks_says_it_needs_a_checkout(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "site-packages" / "notebooks"
    monkeypatch.setattr(ocg.jobs.notebook_runner, "NOTEBOOKS_DIR", missing)
    code, err = cli(capsys, "report", "params/runs/demo.yaml")
    assert code == 2 and err.startswith(f"ocg: error: 03_main_results: no notebooks in {missing}")
    assert "need a source checkout (git clone" in err, err
