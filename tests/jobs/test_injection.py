"""No input becomes code or a path outside the outputs: notebook parameters and condition names."""

import re

import pytest
import yaml

from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.core.paths import TEMPLATES_FILE
from ocg.data import load_templates


@pytest.fixture
def no_kernel(monkeypatch):
    """Fails the test if papermill is asked to start a kernel."""
    import papermill

    def refuse(*args, **kwargs):
        raise AssertionError("a kernel started")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)


@pytest.mark.parametrize(
    "param, error",
    [
        (
            'import os; os.system("touch {marker}"); x=1',
            "-p import os; os.system(.*): not a parameter of 00_build_data",
        ),
        (
            "subsetk=1",
            "-p subsetk: not a parameter of 00_build_data; it declares n_concepts, subset_k",
        ),
        ("subset_k", "-p subset_k: expected NAME=VALUE"),
        ("subset_k=abc", "-p subset_k: got 'abc'; expected int | None"),
        ("subset_k=2.5", "-p subset_k: got 2.5; expected int | None"),
        ("n_concepts=true", "-p n_concepts: got True; expected int"),
        ("subset_k=2024-01-01", r"-p subset_k: got datetime.date\(2024, 1, 1\)"),
        ("conditions=[ordered, 3]", r"-p conditions: got \['ordered', 3\]; expected list\[str\]"),
        ("out_dir=[", "-p out_dir: value '\\[' is not YAML"),
    ],
)
def test_run_notebook_takes_only_declared_parameters_of_their_type(
    param, error, tmp_path, capsys, no_kernel
):
    marker = tmp_path / "pwned"
    code = main(
        ["run-notebook", "00_build_data", "-p", param.format(marker=marker), "--out", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("ocg: error: ") and "Traceback" not in err
    assert re.search(error, err), err
    assert not marker.exists() and not list(tmp_path.glob("*.ipynb"))


def test_the_pipeline_checks_parameters_too(no_kernel):
    from ocg.jobs.notebook_runner import run_notebook

    with pytest.raises(OcgInputError, match="01_generate: parameter subsetk: not a parameter"):
        run_notebook("01_generate", {"subsetk": 2})


def test_declared_types_of_a_notebook_of_ones_own(tmp_path):
    import nbformat

    from ocg.jobs.notebook_parameters import check_parameters, declared

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "k: Optional[int] = None  # help\nrate = 0.5\nroot = str(1)\n"
            "ids: list[int] = []\np: Path = None\nd: Optional[str] = None",
            metadata={"tags": ["parameters"]},
        )
    ]
    path = tmp_path / "mine.ipynb"
    nbformat.write(nb, path)
    assert declared(path) == {
        "k": "int | None",
        "rate": "float",
        "root": "any",
        "ids": "list[int]",
        "p": "Path",
        "d": "str | None",
    }
    assert check_parameters(path, {"k": None, "rate": 1, "root": [1], "ids": [1, 2]})
    for values, error in [
        ({"rate": float("inf")}, "rate: got inf; expected float"),
        ({"ids": [1, "2"]}, r"ids: got \[1, '2'\]; expected list\[int\]"),
        ({"p": "x"}, "parameters cell: p: type 'Path' is not one ocg checks"),
        ({"d": 3}, "d: got 3; expected str | None"),
    ]:
        with pytest.raises(OcgInputError, match=error):
            check_parameters(path, values)
    nb.cells[0].source = "rate = 0.5\nk: int | None = None"  # a line papermill cannot read
    nbformat.write(nb, path)
    with pytest.raises(OcgInputError, match=r"parameters cell: k: papermill cannot read this line"):
        declared(path)
    nb.cells[0].metadata["tags"] = []
    nbformat.write(nb, path)
    with pytest.raises(
        OcgInputError, match=r"parameter k: not a parameter of mine; it declares none"
    ):
        check_parameters(path, {"k": 1})


@pytest.mark.slow
def test_a_failing_cell_is_reported_as_ocg_report_does(tmp_path, capsys):
    code = main(
        [
            "run-notebook",
            "00_build_data",
            "-p",
            "n_concepts=7",
            "-p",
            "subset_k=2",
            "--out",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert (
        "00_build_data.ipynb failed in cell 3 (cell index 3): OcgInputError: n_concepts: got 7"
        in err
    )
    assert f"partial executed copy, error shown: {tmp_path / '00_build_data.ipynb'}" in err
    assert (tmp_path / "00_build_data.html").exists()


@pytest.mark.parametrize("name", ["../../../../x", "a b", "/abs", ".hidden", "x/y"])
def test_condition_names_follow_the_name_rule(name, tmp_path):
    raw = yaml.safe_load(TEMPLATES_FILE.read_text())
    raw["conditions"][name] = {"text": "ordered", "shot": False}
    path = tmp_path / "templates.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(
        OcgInputError, match=re.escape(f"{path}: conditions: got '{name}'; a name must start")
    ):
        load_templates(path)


def test_a_notebook_run_by_hand_writes_no_shared_table(tmp_path, monkeypatch, capsys):
    """reports_dir None (JupyterLab) saves nothing, so outputs/reports/tables/ is never rewritten quietly."""
    import pandas as pd

    from ocg.analysis import report

    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "outputs"))
    assert report.save_table(pd.DataFrame({"a": [1]}), "table1") == []
    assert "table1: not saved (reports_dir is None" in capsys.readouterr().out
    assert not (tmp_path / "outputs").exists()
    saved = report.save_table(pd.DataFrame({"a": [1]}), "table1", tmp_path / "mine")
    assert [p.name for p in saved] == ["table1.provenance.json", "table1.csv"]


def test_run_notebook_saves_tables_beside_its_executed_copy(tmp_path, monkeypatch):
    import ocg.jobs.pipeline

    asked = {}
    monkeypatch.setattr(
        ocg.jobs.pipeline,
        "run_step",
        lambda source, params, out_dir, name: asked.update(params) or out_dir,
    )
    assert main(["run-notebook", "03_main_results", "--out", str(tmp_path / "nb")]) == 0
    assert asked == {"reports_dir": str(tmp_path / "nb")}
    monkeypatch.chdir(
        tmp_path
    )  # a relative --out: the kernel runs in notebooks/, so it is made absolute
    assert main(["run-notebook", "03_main_results", "--out", "rel"]) == 0
    assert asked == {"reports_dir": str(tmp_path / "rel")}
    assert (
        main(
            [
                "run-notebook",
                "03_main_results",
                "--out",
                str(tmp_path / "nb"),
                "-p",
                f"reports_dir={tmp_path}",
            ]
        )
        == 0
    )
    assert asked == {"reports_dir": str(tmp_path)}
    asked.clear()
    assert main(["run-notebook", "09_cases", "--out", str(tmp_path / "nb")]) == 0
    assert asked == {}  # declares no reports_dir


def test_saved_files_are_shown_as_the_report_names_them(tmp_path, capsys):
    """Not the folder the report was built in (renamed when complete): tables/<name>.csv."""
    import pandas as pd

    from ocg.analysis import report

    building = tmp_path / "demo.building~"
    report.show_saved(*report.save_table(pd.DataFrame({"a": [1]}), "table1", building))
    shown = capsys.readouterr().out
    assert shown.splitlines() == ["saved tables/table1.provenance.json", "saved tables/table1.csv"]
    assert "building~" not in shown
