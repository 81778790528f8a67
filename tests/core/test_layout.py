"""The output layout (ocg/core/layout.py): every path of a model, report and sweep, the environment
variables that move the roots, and no output file name spelled anywhere else."""

import json
import re

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.layout import (
    ConvertedModel,
    ExecutedNotebook,
    ModelGenerations,
    ModelScores,
    Outputs,
    ReportFolder,
    SweepFolder,
    outputs,
)
from ocg.core.paths import PROJECT_ROOT

OUTPUT_FILES = (
    "signature.json",
    "run_card.json",
    "answers.parquet",
    "summary.parquet",
    "groups.parquet",
    "index.html",
    "cases.html",
    "manifest.json",
    "report.json",
    "instances.parquet",
    "failed.json",
    "analysis.json",
    "ocg_source.json",
    "results.json",
)


def test_a_models_generations_and_scores(tmp_path):
    out = Outputs(tmp_path)
    gen = out.model_generations("m")
    assert gen.folder == tmp_path / "generations" / "m" and gen.model == "m"
    assert gen.run_card == tmp_path / "generations" / "m" / "run_card.json"
    assert gen.store("ordered") == tmp_path / "generations" / "m" / "ordered.jsonl"
    gen.folder.mkdir(parents=True)
    for name in ("ordered.jsonl", "original.jsonl", "run_card.json", "server.log"):
        (gen.folder / name).write_text("")
    assert [p.name for p in gen.stores()] == ["ordered.jsonl", "original.jsonl"]
    scores = out.model_scores("m")
    assert scores == ModelScores.of("m", tmp_path / "scores")
    assert (scores.answers, scores.groups, scores.summary, scores.signature) == tuple(
        tmp_path / "scores" / "m" / n
        for n in ("answers.parquet", "groups.parquet", "summary.parquet", "signature.json")
    )
    assert out.dataset("n4").manifest == tmp_path / "data" / "n4" / "manifest.json"
    assert out.dataset("n4").instances == tmp_path / "data" / "n4" / "instances.parquet"
    assert out.notebooks == tmp_path / "notebooks"


def test_a_report_folder(tmp_path):
    report = Outputs(tmp_path).report("demo")
    root = tmp_path / "reports" / "demo"
    assert report.folder == root
    assert report.table("table1") == root / "tables" / "table1.csv"
    assert report.table("table1", "tex") == root / "tables" / "table1.tex"
    assert report.figure("figure3", "pdf") == root / "figures" / "figure3.pdf"
    assert (report.index, report.cases, report.case_chunks, report.state, report.results) == (
        root / "index.html",
        root / "cases.html",
        root / "cases",
        root / "report.json",
        root / "results.json",
    )
    assert report.staging == ReportFolder(tmp_path / "reports" / "demo.building~")
    assert report.staging.index == tmp_path / "reports" / "demo.building~" / "index.html"
    assert report.previous == tmp_path / "reports" / "demo.old~"
    executed = ExecutedNotebook(report.folder, "01_generate-m")
    assert (executed.copy, executed.page) == (
        root / "01_generate-m.ipynb",
        root / "01_generate-m.html",
    )


def test_a_sweep_folder(tmp_path):
    sweep = SweepFolder(tmp_path, "paper")
    assert sweep.outputs.generations == tmp_path / "generations"  # shared by sweeps writing here
    assert sweep.report.folder == tmp_path / "reports" / "paper"
    assert sweep.notebooks("a") == tmp_path / "notebooks" / "a"
    assert sweep.status("a") == tmp_path / "status" / "paper" / "a"  # per sweep name
    assert (
        sweep.done_marker("a", "02_score") == tmp_path / "status" / "paper" / "a" / "02_score.done"
    )
    assert sweep.failure("a") == tmp_path / "status" / "paper" / "a" / "failed.json"
    assert sweep.analysis_marker == tmp_path / "status" / "paper" / "analysis.json"
    assert (sweep.log("a"), sweep.analysis_log) == (
        tmp_path / "logs" / "a.log",
        tmp_path / "logs" / "analysis.log",
    )
    assert (sweep.array_script, sweep.analysis_script, sweep.manifest) == (
        tmp_path / "slurm" / "array.sbatch",
        tmp_path / "slurm" / "analysis.sbatch",
        tmp_path / "slurm" / "manifest.json",
    )


def test_the_roots_follow_the_environment_when_asked_not_at_import(tmp_path, monkeypatch):
    monkeypatch.delenv("OCG_MODEL_CACHE", raising=False)
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "one"))
    assert outputs().root == tmp_path / "one"
    assert ModelGenerations.of("m").folder == tmp_path / "one" / "generations" / "m"
    assert ModelScores.of("m").folder == tmp_path / "one" / "scores" / "m"
    assert ReportFolder.at() == ReportFolder(tmp_path / "one" / "reports")  # a notebook run alone
    assert ReportFolder.at(tmp_path / "r").tables == tmp_path / "r" / "tables"
    assert (  # converted models do not follow OCG_OUTPUTS: moving it never converts again
        ConvertedModel.named("x").source
        == PROJECT_ROOT / "outputs" / "models" / "x" / "ocg_source.json"
    )
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "two"))
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    assert ModelScores.of("m").signature == tmp_path / "two" / "scores" / "m" / "signature.json"
    assert ConvertedModel.named("x").folder == tmp_path / "cache" / "x"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OCG_OUTPUTS", "rel")
    assert outputs().root == tmp_path / "rel"  # absolute, whatever the caller's directory later
    monkeypatch.delenv("OCG_OUTPUTS")
    assert outputs().root == PROJECT_ROOT / "outputs"
    monkeypatch.setenv("OCG_OUTPUTS", " ")
    with pytest.raises(OcgInputError, match="OCG_OUTPUTS"):
        outputs()


def test_a_dataset_built_without_a_folder_lands_where_the_layout_says(tmp_path, monkeypatch):
    from ocg.data import build_dataset, load_dataset

    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path))
    path = build_dataset(n_concepts=4, subset_k=1, conditions=["ordered"])
    built = Outputs(tmp_path).dataset(path.name)
    assert path.parent == tmp_path / "data" and built.manifest.exists() and built.instances.exists()
    assert load_dataset(path)[1]["n_sets"] == 1


def _sources() -> dict[str, str]:
    """Every Python module of ocg/ and benchmarks/, and every notebook's code, by path."""
    files = {
        str(p.relative_to(PROJECT_ROOT)): p.read_text()
        for folder in ("ocg", "benchmarks")
        for p in (PROJECT_ROOT / folder).rglob("*.py")
    }
    for nb in (PROJECT_ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        files[str(nb.relative_to(PROJECT_ROOT))] = "\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "code"
        )
    return files


@pytest.mark.parametrize(
    "name", OUTPUT_FILES + ("{}.parquet", "{}.jsonl", "{}.done", "{}.ipynb", "{}.html")
)
def test_each_output_file_name_is_spelled_in_the_layout_alone(name):
    """A name as a whole string ("signature.json"), or as a pattern's end (f"{level}.parquet");
    a message that shows a name inside longer text is no spelling of it."""
    text = re.escape(name).replace(r"\{\}", r"\{[^{}'\"]*\}")
    literal = re.compile(r"""["']""" + text + r"""["']""")
    spelled = sorted(path for path, text in _sources().items() if literal.search(text))
    assert set(spelled) <= {"ocg/core/layout.py"}, (
        f"{name!r} spelled as a string in {spelled}; ask ocg/core/layout.py"
    )


def test_no_module_but_layout_spells_an_output_name():
    """Every file name of the outputs' layout is spelled in ocg/core/layout.py alone."""
    import ast
    from pathlib import Path

    import ocg

    root = Path(ocg.__file__).parent
    layout = root / "core" / "layout.py"
    names = {
        node.value
        for node in ast.walk(ast.parse(layout.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "." in node.value
        and " " not in node.value
        and not node.value.startswith(".")
    }
    assert {"server.log", "interrupted.json", "manifest.dry-run.json", "run_card.json"} <= names
    spelled = {
        (path.relative_to(root).as_posix(), node.value)
        for path in root.rglob("*.py")
        if path != layout
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    }
    assert not spelled, sorted(spelled)
