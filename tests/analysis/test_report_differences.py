"""compare-reports says why two reports differ: per model, the scoring families whose version,
settings or scored answers moved (the pinned signatures), the families only one scored, and the
commits between the two reports' own that changed ocg/ (a git checkout made here)."""

import subprocess

import pandas as pd
import pytest

from ocg.analysis import report_differences
from ocg.analysis.report import save_table
from ocg.cli import main
from ocg.core.files import read_json, write_json
from ocg.core.layout import ReportFolder
from ocg.records import Signature


def _report(folder, value, families, commit, flags=6, dtype="float32"):
    save_table(
        pd.DataFrame({"model": ["m"], "metric": ["coverage"], "value": [value]}), "table1", folder
    )
    sig = Signature(metrics=sorted(families), families=families, flags_version=flags)
    path = ReportFolder(folder).scores / "m" / "signature.json"
    path.parent.mkdir(parents=True)
    sig.write(path)
    write_json(
        ReportFolder(folder).results,
        {
            "models": {"m": {"model_id": "org/m", "dtype": dtype, "metrics": {}}},
            "provenance": {"git": {"commit": commit, "dirty": False}},
        },
    )
    return folder


def _key(version, **settings):
    return {"key": {"inputs_sha256": "abc", "version": version, **settings}}


def _repo(tmp_path):
    """A checkout of three commits: two change ocg/, one only docs/."""
    repo = tmp_path / "repo"
    (repo / "ocg").mkdir(parents=True)
    (repo / "docs").mkdir()

    def git(*args):
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q")
    commits = []
    for path, message in [
        ("ocg/a.py", "first"),
        ("ocg/a.py", "Coverage: control characters read as spaces"),
        ("docs/x.md", "docs only"),
    ]:
        (repo / path).write_text(message)
        git("add", "-A")
        git("commit", "-qm", message)
        commits.append(git("rev-parse", "HEAD"))
    return repo, commits


def test_the_changed_families_settings_and_commits_are_named(tmp_path, capsys, monkeypatch):
    repo, (c1, _, c3) = _repo(tmp_path)
    a = _report(
        tmp_path / "a",
        50.0,
        {"coverage": _key(9, rule="lookup"), "perplexity": _key(2, model="x")},
        c1,
        flags=5,
        dtype="bfloat16",
    )
    b = _report(
        tmp_path / "b",
        51.0,
        {"coverage": _key(10, rule="lookup"), "perplexity": _key(2, model="y"), "vendi": _key(1)},
        c3,
    )
    assert report_differences.scoring_differences(a, b) == [
        "coverage: version 9 → 10 (its code changed what it computes) [m]",
        "perplexity: setting model 'x' → 'y' [m]",
        "vendi: scored only in B [m]",
        "answer flags: version 5 → 6 [m]",
    ]
    assert report_differences.generation_differences(a, b) == ["m: dtype 'bfloat16' → 'float32'"]
    code = report_differences.code_differences(a, b, repo)
    assert code[0] == f"code: A built at {c1}, B at {c3}"
    assert code[1] == "  1 commit(s) from A to B changed ocg/, params/, notebooks/:"
    assert code[2].endswith("Coverage: control characters read as spaces") and len(code) == 3
    assert report_differences.code_differences(b, a, repo)[1].startswith("  B is older than A")
    # the command prints the table's difference, then why
    monkeypatch.setattr(report_differences.code_differences, "__defaults__", (repo,))
    assert main(["compare-reports", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "column 'value' differs" in out
    assert out.index("Why they may differ") > out.index("1 difference(s)")
    assert "  coverage: version 9 → 10" in out and "control characters read as spaces" in out
    assert out.index("m: dtype 'bfloat16' → 'float32'") < out.index("coverage: version 9 → 10")


def test_a_commit_that_is_not_a_hash_never_reaches_git(tmp_path):
    repo, (c1, _, _) = _repo(tmp_path)
    a = _report(tmp_path / "a", 1.0, {}, c1)
    b = _report(tmp_path / "b", 2.0, {}, f"--output={tmp_path / 'written'}")
    lines = report_differences.code_differences(a, b, repo)
    assert lines == [f"code: A built at {c1}, B at an unknown commit"]
    assert not (tmp_path / "written").exists()


def test_same_signatures_and_commit_say_nothing_differs(tmp_path):
    repo, (c1, _, _) = _repo(tmp_path)
    fam = {"coverage": _key(10)}
    a, b = _report(tmp_path / "a", 1.0, fam, c1), _report(tmp_path / "b", 2.0, fam, c1)
    assert report_differences.explain(a, b) == []


def _with_git(folder, **git):
    doc = __import__("json").loads(ReportFolder(folder).results.read_text())
    doc["provenance"]["git"].update(git)
    write_json(ReportFolder(folder).results, doc)


def test_an_upper_case_commit_is_the_same_commit_and_a_dirty_tree_is_said(tmp_path, capsys):
    repo, (c1, _, _) = _repo(tmp_path)
    a = _report(tmp_path / "a", 50.0, {"coverage": _key(9)}, c1)
    b = _report(tmp_path / "b", 51.0, {"coverage": _key(9)}, c1.upper())
    _with_git(a, dirty=False)
    _with_git(b, dirty=True)
    assert main(["compare-reports", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "unknown commit" not in out, out
    assert f"code: both built at {c1}, but B's checkout had uncommitted changes" in out, out
    _with_git(b, dirty=False)
    assert report_differences.code_differences(a, b, repo) == []


@pytest.mark.parametrize("block", [[], "x", {"m": 3}, {"m": []}])
def test_a_malformed_models_block_is_said_not_a_traceback(tmp_path, capsys, block):
    repo, (c1, _, _) = _repo(tmp_path)
    a = _report(tmp_path / "a", 50.0, {"coverage": _key(9)}, c1)
    b = _report(tmp_path / "b", 51.0, {"coverage": _key(9)}, c1)
    doc = __import__("json").loads(ReportFolder(b).results.read_text())
    doc["models"] = block
    write_json(ReportFolder(b).results, doc)
    assert main(["compare-reports", str(a), str(b)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err == "", captured.err
    said = [line for line in captured.out.splitlines() if "B's results.json: `models`" in line]
    assert len(said) == 1, captured.out


def _with_cpu(folder, cpu):
    path = ReportFolder(folder).results
    doc = read_json(path)
    doc["models"]["m"]["cpu"] = cpu
    write_json(path, doc)
    return folder


AVX512 = {
    "name": "AMD EPYC",
    "vector_extensions": ["avx", "avx2", "avx512f"],
    "torch_kernels": "AVX512",
    "kernel_caps": {},
}


@pytest.mark.parametrize(
    "cpu_b, said",
    [
        (AVX512, None),
        (dict(AVX512, name="another name"), None),  # the name alone decides no arithmetic
        (
            dict(AVX512, torch_kernels="AVX2", kernel_caps={"ATEN_CPU_CAPABILITY": "avx2"}),
            "AMD EPYC, AVX-512, torch kernels AVX512 → AMD EPYC, AVX-512, torch kernels AVX2, "
            "ATEN_CPU_CAPABILITY=avx2",
        ),
        (
            dict(AVX512, name="Xeon", vector_extensions=["avx", "avx2"], torch_kernels="AVX2"),
            "AMD EPYC, AVX-512, torch kernels AVX512 → Xeon, AVX2, torch kernels AVX2",
        ),
        (None, "AMD EPYC, AVX-512, torch kernels AVX512 → not recorded"),
    ],
)
def test_answers_made_on_another_cpus_kernels_are_named(tmp_path, cpu_b, said):
    a = _with_cpu(_report(tmp_path / "a", 1.0, {}, "a" * 40), AVX512)
    b = _with_cpu(_report(tmp_path / "b", 1.0, {}, "a" * 40), cpu_b)
    lines = report_differences.generation_differences(a, b)
    if said is None:
        assert lines == []
    else:
        assert lines == [
            f"m: generated on another CPU's kernels: {said} (floats add in another order: a "
            "near-tie between two tokens can flip)"
        ]
