"""A report's notebooks stood in for by a step that writes what they write (executed copies,
tables named by the run's models), so report tests run in seconds; the plan, the staging folder,
the landing page and compare-reports stay the real ones (tests/jobs/test_report_folders.py,
tests/cli/test_closed_pipe.py)."""

import json
from pathlib import Path

import yaml

from ocg.core.paths import PROJECT_ROOT
from ocg.jobs import pipeline

DEMO = yaml.safe_load(open(PROJECT_ROOT / "params" / "runs" / "demo.yaml"))
TWO = dict(DEMO, analysis=["03_main_results", "07_reasoning_models"])
ONE = dict(TWO, models=["smollm2-135m-instruct"], table7_pairs=None)


def write_run(folder: Path, run: dict) -> Path:
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


def fake_step(notebook, params, report_dir, name, shown_dir=None, fail=None, during=None):
    """What a notebook leaves in the report: its executed copy and HTML, and its tables (Table 7
    only when there are two models to pair)."""
    if not isinstance(params, dict):  # generation's or scoring's request
        params = {"models": getattr(params, "models", None) or [params.model.name]}
    (report_dir / f"{name}.ipynb").write_text(json.dumps({"models": params.get("models")}))
    (report_dir / f"{name}.html").write_text(f"<p>{name}</p>")
    tables = Path(params.get("reports_dir", report_dir)) / "tables"
    if notebook == "03_main_results":
        tables.mkdir(exist_ok=True)
        (tables / "table3.csv").write_text(
            "model,value\n" + "".join(f"{m},1.0\n" for m in params["models"])
        )
    if notebook == "07_reasoning_models" and len(params["models"]) == 2:
        (tables / "table7.csv").write_text(
            "model,base,value\n{},{},2.0\n".format(*params["models"])
        )
    for table in tables.glob("*.csv") if tables.is_dir() else ():  # as save_table writes it
        table.with_suffix(".provenance.json").write_text("{}")
    if during and notebook == during[0]:
        during[1](report_dir)
    if notebook == fail:
        raise pipeline.StepFailed(f"notebook {notebook} failed in cell 3: ValueError: boom")
    return report_dir / f"{name}.ipynb"


def report(monkeypatch, tmp_path, run, **step_options) -> int:
    monkeypatch.setattr(pipeline, "run_step", lambda *a, **k: fake_step(*a, **k, **step_options))
    return pipeline.run_report(write_run(tmp_path, run))
