"""A score set is complete or recognisably unfinished at every instant: a rescoring killed after
any file it writes is refused by load_scores and recomputed by the next `ocg score`; one scorer
per scores folder; files follow the umask."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.core.files import atomic_path, make_temp, write_json
from ocg.core.paths import PROJECT_ROOT
from ocg.results.scores import load_scores
from ocg.scoring import SCORING_FILE, cpu_families, score_model
from ocg.scoring.scoreset import read_score_set
from ocg.sweep import load_sweep
from ocg.sweep.slurm import write_array_script
from tests.helpers import checked_run, write_generations

INTERRUPT = Path(__file__).parent.parent / "interrupt_ocg.py"
RULES = {"a": "pos_aware_lookup", "b": "commongen_lemma"}  # they disagree on "rides" (-> "rid")
ANSWERS = [
    "The boy rides a bike down the street.",
    "A boy rode his bike on the street.",
    "The street where a boy rides a bike.",
    "A bike.",
]


def _scoring_file(folder: Path, rule: str) -> Path:
    settings = yaml.safe_load(SCORING_FILE.read_text())
    settings.update(matching_rule=rule, spacy_processes=1, metrics=cpu_families())
    path = folder / f"scoring-{rule}.yaml"
    path.write_text(yaml.safe_dump(settings))
    return path


def _score_args(root: Path, rule: str) -> list[str]:
    return [
        "score",
        "--generations",
        str(root / "gen"),
        "--out",
        str(root / "scores"),
        "--scoring-file",
        str(_scoring_file(root, rule)),
    ]


def _run_interrupted(when: str, args: list[str], **kwargs):
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.Popen(
        [sys.executable, str(INTERRUPT), when, *args], env=env, text=True, **kwargs
    )


def _check_consistent(folder: Path, rule: str) -> pd.DataFrame:
    """All four files agree: checksums, the rule named, summary recomputed from the answers."""
    signature, tables = read_score_set(folder)
    assert signature.family("coverage")["matching_rule"] == rule
    answers, groups, summary = tables["answers"], tables["groups"], tables["summary"]
    keys = ["condition", "template_id"]
    from_answers = 100.0 * answers.groupby(keys)["all_present"].mean()
    assert summary.set_index(keys)["coverage_wo_order"].to_dict() == pytest.approx(
        from_answers.to_dict()
    )
    assert groups.groupby(keys)["n"].sum().to_dict() == answers.groupby(keys).size().to_dict()
    assert not list(folder.glob(".*.tmp"))
    return answers


@pytest.fixture(scope="module")
def scored_with_rule_a(tmp_path_factory):
    root = tmp_path_factory.mktemp("scoreset")
    rows = [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": a,
        }
        for s in ("s1", "s2")
        for t in (0, 1)
        for p, a in enumerate(ANSWERS)
    ]
    write_generations(root / "gen", "m", rows)
    assert main(_score_args(root, RULES["b"])) == 0
    b_verdicts = pd.read_parquet(root / "scores" / "m" / "answers.parquet").all_present.tolist()
    assert main(["score", "--redo", *_score_args(root, RULES["a"])[1:]]) == 0
    a_verdicts = _check_consistent(root / "scores" / "m", RULES["a"]).all_present.tolist()
    assert a_verdicts != b_verdicts  # the rules disagree here, so a mixed set would show
    return root, a_verdicts


@pytest.mark.slow
@pytest.mark.parametrize("writes_done", [0, 1, 2, 3, 4])
def test_a_rescoring_killed_after_each_file_leaves_nothing_read_as_complete(
    scored_with_rule_a, tmp_path, writes_done
):
    source, a_verdicts = scored_with_rule_a
    shutil.copytree(source / "gen", tmp_path / "gen")
    shutil.copytree(source / "scores", tmp_path / "scores")
    folder = tmp_path / "scores" / "m"
    proc = _run_interrupted(str(writes_done), _score_args(tmp_path, RULES["b"]))
    assert proc.wait(timeout=300) == -9
    if (
        writes_done == 0
    ):  # killed inside its first write: the old set is whole, a temporary file is left
        assert list(folder.glob(".answers.parquet.*.tmp"))
        assert read_score_set(folder)[0].family("coverage")["matching_rule"] == RULES["a"]
    elif writes_done < 4:  # some tables are new, the signature is old: unfinished, and said so
        with pytest.raises(
            OcgInputError,
            match=rf"{folder}: unfinished score set: .* does not match signature.json",
        ):
            load_scores(tmp_path / "scores")
    else:  # the signature was written last: the rescoring is complete
        _check_consistent(folder, RULES["b"])
    # the next `ocg score`, with the rule the old signature names, recomputes whatever is unfinished
    assert main(_score_args(tmp_path, RULES["a"])) == 0
    assert _check_consistent(folder, RULES["a"]).all_present.tolist() == a_verdicts
    assert load_scores(tmp_path / "scores").summary.shape[0] == 2


@pytest.mark.slow
def test_a_second_scorer_is_refused_at_once_naming_the_first(scored_with_rule_a, tmp_path):
    source, _ = scored_with_rule_a
    shutil.copytree(source / "gen", tmp_path / "gen")
    first = _run_interrupted("pause", _score_args(tmp_path, RULES["b"]), stdout=subprocess.PIPE)
    try:
        # it holds the folder, mid-write (after its progress lines)
        lines = iter(first.stdout.readline, "")
        assert any(line.strip() == "paused" for line in lines), "the first scorer never paused"
        second = _run_interrupted(
            "never", _score_args(tmp_path, RULES["a"]), stderr=subprocess.PIPE
        )
        _, err = second.communicate(timeout=300)
        assert second.returncode == 1  # busy: a fault, not bad input
        assert (
            f"ocg: error: {tmp_path / 'scores' / 'm'}: PID {first.pid} on " in err
            and "is writing here" in err
        )
        assert "Traceback" not in err
    finally:
        first.kill()
        first.wait()
    assert not (tmp_path / "scores" / "m" / "answers.parquet").exists()  # the second wrote nothing


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o027])
def test_written_files_follow_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        write_json(tmp_path / "x.json", {"a": 1})
        with atomic_path(tmp_path / "page.html") as tmp:
            tmp.write_text("<p>hi</p>")
        made = make_temp(tmp_path, ".model.", suffix="", directory=True)
        sweep = {
            **yaml.safe_load((PROJECT_ROOT / "params" / "sweeps" / "demo.yaml").read_text()),
            "name": "t",
            "outputs": str(tmp_path / "sweep"),
        }
        (tmp_path / "t.yaml").write_text(yaml.safe_dump(sweep))
        script = write_array_script(
            load_sweep(tmp_path / "t.yaml")
        )  # a sweep as `ocg sweep` loads it
        rows = [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": p,
                "concepts": ["dog", "run"],
                "answer": "Dogs run.",
            }
            for p in range(2)
        ]
        out = score_model(
            write_generations(tmp_path / "gen", "m", rows),
            metrics=["pbleu"],
            out_dir=tmp_path / "scores",
            progress=False,
        )
    finally:
        os.umask(previous)
    files = [tmp_path / "x.json", tmp_path / "page.html", *(p for p in out.iterdir())]
    assert {p.name for p in out.iterdir()} >= {
        "answers.parquet",
        "groups.parquet",
        "summary.parquet",
        "signature.json",
    }
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in files} == {
        p.name: oct(0o666 & ~umask) for p in files
    }
    assert oct(made.stat().st_mode & 0o777) == oct(0o777 & ~umask)
    assert {oct(p.stat().st_mode & 0o777) for p in script.parent.iterdir()} == {
        oct(0o777 & ~umask)
    }  # scripts


@pytest.mark.slow
def test_a_converted_model_follows_the_umask(tmp_path, monkeypatch):
    from ocg.weights.embedded import ensure_converted

    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    previous = os.umask(0o002)
    try:
        target = ensure_converted("smollm2-135m-instruct")
    finally:
        os.umask(previous)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in target.iterdir()}
    assert "model.safetensors" in modes and set(modes.values()) == {"0o664"}, modes
    assert oct(target.stat().st_mode & 0o777) == "0o775"


def test_an_old_signature_without_checksums_is_unfinished(tmp_path):
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "run"],
            "answer": "Dogs run.",
        }
        for p in range(2)
    ]
    model_dir = write_generations(tmp_path / "gen", "m", rows)
    out = score_model(model_dir, metrics=["pbleu"], out_dir=tmp_path / "scores", progress=False)
    signature = json.loads((out / "signature.json").read_text())
    write_json(out / "signature.json", {k: v for k, v in signature.items() if k != "files"})
    with pytest.raises(
        OcgInputError, match="unfinished score set: signature.json records no table checksums"
    ):
        load_scores(tmp_path / "scores")
    score_model(model_dir, metrics=["pbleu"], out_dir=tmp_path / "scores", progress=False)
    assert json.loads((out / "signature.json").read_text())["recomputed"] == ["pbleu"]
    assert load_scores(tmp_path / "scores").summary.shape[0] == 1


def test_the_landing_page_names_an_unfinished_score_set_and_shows_the_rest(
    scored_with_rule_a, tmp_path
):
    from ocg.site.landing import write_index

    source, _ = scored_with_rule_a
    shutil.copytree(source / "gen", tmp_path / "gen")
    for name in ("m", "half"):
        shutil.copytree(source / "scores" / "m", tmp_path / "scores" / name)
    shutil.copytree(source / "gen" / "m", tmp_path / "gen" / "half")
    half = tmp_path / "scores" / "half" / "groups.parquet"
    pd.read_parquet(half).head(1).to_parquet(
        half
    )  # as a rescoring killed after its second file leaves it
    run = checked_run(**{"models": ["m", "half"], "conditions": ["ordered"], "file": "r.yaml"})
    page = write_index(
        tmp_path / "report",
        "t",
        [],
        run=run,
        scores_root=tmp_path / "scores",
        generations_root=tmp_path / "gen",
    ).read_text()
    models_table = page.split("<h2>Models</h2>")[1].split("</table>")[0]
    rows = {row.split("</code>")[0]: row for row in models_table.split("<tr><td><code>")[1:]}
    assert "<span class='ok'>done</span>" in rows["m"]
    assert (
        "unfinished score set</span>: groups.parquet does not match signature.json" in rows["half"]
    )
    assert "cases.html" in page  # the complete model's answers are still browsable


def test_the_landing_page_names_an_unreadable_run_card_and_shows_the_rest(
    scored_with_rule_a, tmp_path
):
    from ocg.site.landing import write_index

    source, _ = scored_with_rule_a
    shutil.copytree(source / "gen", tmp_path / "gen")
    shutil.copytree(source / "scores", tmp_path / "scores")
    (tmp_path / "gen" / "m" / "run_card.json").write_text('{"model": "m", "runs": "not a list"}')
    page = write_index(
        tmp_path / "report",
        "t",
        [],
        run=checked_run(**{"models": ["m"], "conditions": ["ordered"], "file": "r"}),
        scores_root=tmp_path / "scores",
        generations_root=tmp_path / "gen",
    ).read_text()
    row = page.split("<h2>Models</h2>")[1].split("</table>")[0]
    assert "unreadable run card</span>: " in row and "runs: expected a list" in row
