"""Committed notebooks are clean and parameterised; they execute under papermill."""

import json
from pathlib import Path

import pytest

from ocg.core.paths import NOTEBOOKS_DIR
from ocg.data import load_dataset
from ocg.jobs.notebook_runner import run_notebook

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def test_the_notebooks_are_the_steps_of_the_plan():
    from ocg.core.notebook_names import ANALYSES, MODEL_NOTEBOOKS

    assert [p.stem for p in NOTEBOOKS] == ["00_build_data", *MODEL_NOTEBOOKS, *ANALYSES]


def test_no_module_but_notebook_names_spells_a_notebook_name():
    """A module that names a notebook (to run it, link it or check a run file) takes the name from
    ocg/core/notebook_names.py: a renamed notebook then breaks nowhere else (site/landing.py and explain.py
    once spelled the analyses' names again)."""
    import ast

    import ocg

    names = {p.stem for p in NOTEBOOKS}
    package = Path(ocg.__file__).parent
    spelled = [
        f"{path.relative_to(package)}:{node.lineno}: {node.value!r}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "notebook_names.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert not spelled, f"use the constants of ocg/core/notebook_names.py: {spelled}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs_and_with_parameters(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), (
        f"{path.name}: clear outputs before committing"
    )
    assert nb["metadata"]["kernelspec"]["name"] == "ocg"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, f"{path.name}: expected one cell tagged 'parameters'"
    assert code.index(params[0]) == 0, f"{path.name}: the parameters cell comes first"


def test_every_planned_parameter_exists_in_its_notebook():
    """Every parameter the plan passes is declared, with a value of its declared type."""
    from ocg.jobs.notebook_parameters import check_parameters
    from ocg.jobs.pipeline import load_run, steps
    from ocg.sweep import load_sweep, model_steps, sweep_dirs

    plans = [steps(load_run("params/runs/demo.yaml"), NOTEBOOKS_DIR)]
    for sweep_file in sorted(NOTEBOOKS_DIR.parent.glob("params/sweeps/*.yaml")):
        sweep = load_sweep(sweep_file)
        from ocg.jobs.plan import analysis_steps

        plans.append(
            [(nb, p, nb) for nb, p in model_steps(sweep, sweep_dirs(sweep), sweep.file.models[0])]
            + analysis_steps(sweep, sweep_dirs(sweep), sweep.file.models)
        )
    seen = set()
    for plan in plans:
        for notebook, params, _ in plan:
            if not isinstance(params, dict):  # a step's request: its file's path crosses
                params = {"request_file": "request.json"}
            check_parameters(NOTEBOOKS_DIR / f"{notebook}.ipynb", params)
            seen.add(notebook)
    assert seen == {p.stem for p in NOTEBOOKS}


def test_an_analysis_gets_the_run_values_its_parameters_cell_declares(tmp_path, monkeypatch):
    """What an analysis receives is read from its notebook: declare a parameter, and it comes."""
    from ocg.jobs import plan
    from ocg.jobs.pipeline import load_run

    notebook = tmp_path / "09_cases.ipynb"
    cell = {
        "cell_type": "code",
        "metadata": {"tags": ["parameters"]},
        "outputs": [],
        "execution_count": None,
        "source": "models_file = None\nreports_dir = None\nn_examples = 3\n",
    }
    notebook.write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    monkeypatch.setattr(plan, "find_notebook", lambda name: notebook)
    run = load_run("params/runs/demo.yaml")
    dirs = plan.Dirs(tmp_path / "g", tmp_path / "s", tmp_path / "r")
    assert plan.notebook_params("09_cases", run, dirs, ["m"]) == {
        "models_file": run.file.models_file,
        "reports_dir": str(tmp_path / "r"),
    }


@pytest.mark.slow
def test_build_notebook_runs_under_papermill(outputs):
    executed = run_notebook("00_build_data", {"subset_k": 2, "conditions": ["ordered"]})
    assert executed == outputs / "notebooks" / "00_build_data.ipynb"
    assert executed.with_suffix(".html").stat().st_size > 10_000
    df, manifest = load_dataset(outputs / "data" / "n4-k2")
    assert manifest["counts_per_condition"] == {"ordered": 2 * 24 * 6}
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "2 concept sets, 288 instances" in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_documents_every_parameter_with_its_type_and_help(path):
    """`papermill --help-notebook` lists each parameter ocg checks, with a type and one line of help."""
    import papermill

    from ocg.jobs.notebook_parameters import declared

    listed = papermill.inspect_notebook(str(path))
    assert list(listed) == list(declared(path)), "papermill cannot read some parameter lines"
    untyped = [n for n, p in listed.items() if p["inferred_type_name"] in ("None", "Unknown type")]
    assert not untyped, f"{path.name}: annotate {untyped}"
    assert not [n for n, p in listed.items() if not p["help"].strip()], (
        f"{path.name}: a comment for each"
    )


def test_rendered_pages_leave_out_stderr_and_one_hides_the_code(tmp_path):
    """Progress bars and library warnings (stderr) stay in the executed copy, out of the pages;
    readers get the results without code beside the whole notebook."""
    import nbformat

    from ocg.core.layout import ExecutedNotebook
    from ocg.jobs.notebook_runner import to_html

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("table = compute_the_table()")
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stderr", text="FutureWarning: use_auth_token\n 45%|####\n"
        ),
        nbformat.v4.new_output("stream", name="stdout", text="w/ order 61.11\n"),
        nbformat.v4.new_output(
            "error", ename="OcgInputError", evalue="no scores", traceback=["no scores"]
        ),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# 03 · Main results"), cell]
    executed = tmp_path / "03_main_results.ipynb"
    nbformat.write(nb, executed)
    page = to_html(executed)
    pages = ExecutedNotebook(tmp_path, "03_main_results")
    assert page == pages.page
    whole, results = pages.page.read_text(), pages.results_page.read_text()
    for html in (whole, results):
        assert "w/ order 61.11" in html and "no scores" in html and "Main results" in html
        assert "FutureWarning" not in html and "45%" not in html
    assert "compute_the_table" in whole and "compute_the_table" not in results
    assert "FutureWarning" in executed.read_text()  # the copy keeps everything
