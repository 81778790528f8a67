"""A long generation says early what it will still cost: after its second batch, the rest at
that pace and the batch-1 check's bound; after the check's first answer, the check's pace."""

import re

import yaml

from ocg.config.model_registry import load_models
from ocg.generation import generate
from ocg.generation.estimate import after_a_batch, batch_check_pace, duration, so_far


def test_the_projection_is_printed_before_the_rest_runs(tmp_path, capsys):
    (tmp_path / "m.yaml").write_text(
        yaml.safe_dump({"models": {"r": {"backend": "replay", "id": "x/r"}}})
    )
    spec = load_models(tmp_path / "m.yaml")["r"].model_copy(
        update={"batch_check": 4}
    )  # a batched model's check
    generate(
        spec,
        conditions=["ordered"],
        subset_k=1,
        template_ids=[0],
        batch_size=4,
        out_dir=tmp_path / "g",
        progress=True,
    )
    captured = capsys.readouterr()
    out = captured.out + captured.err
    said = re.search(
        r"r: 8 of 24 answers done, 4 in the last \d+ s; the 16 left, at this pace: about \d+ s .*; then the batch-1 check "
        r"regenerates 4 answers one at a time: at most about \d+ s .*`batch_check: 0`",
        out,
    )
    assert said, out
    assert re.search(r"r: batch-1 check: one answer alone in \d+ s; 4 in all: about \d+ s", out), (
        out
    )
    assert out.index("the 16 left") < out.index("batch-1 check: one answer alone")


def test_the_figures():
    assert [duration(s) for s in (40, 130, 720, 3900)] == ["40 s", "2 min", "12 min", "1 h 05 min"]
    figures = dict(answers=48, seconds=60, left=480, batch_size=48, written=96, total=576)
    line = after_a_batch("m", batch_check=16, **figures)
    assert line.startswith("m: 96 of 576 answers done, 48 in the last 60 s; the 480 left")
    assert "about 10 min" in line and "at most about 16 min" in line  # 16 checks x one batch's 60 s
    assert "batch-1" not in after_a_batch("m", batch_check=0, **figures)
    assert batch_check_pace("m", 30, 16).endswith("16 in all: about 8 min")
    assert (
        so_far("m", 96, 432, 130, 460)
        == "m: 96 of 432 answers in 2 min; about 7 min left at this pace"
    )
    assert so_far("m", 432, 432, 1000, 0) == "m: 432 of 432 answers, in 16 min"


def test_a_run_resizes_the_batch_1_check_and_its_result_says_over_how_many(tmp_path, capsys):
    """The demo's run file sets `batch_check` (a tenth of its generation at most); the check's
    line says what it measured over how many answers; an entry without a check gets none."""
    import json

    from ocg.core.paths import PARAMS_DIR
    from ocg.jobs.pipeline import load_run
    from ocg.jobs.plan import Dirs, notebook_params

    (tmp_path / "m.yaml").write_text(
        yaml.safe_dump({"models": {"r": {"backend": "replay", "id": "x/r"}}})
    )
    entry = load_models(tmp_path / "m.yaml")["r"]
    checked = entry.model_copy(update={"batch_check": 8})  # a batched model's check
    for spec, out, expected in ((checked, "g", 2), (entry, "h", None)):
        generate(
            spec,
            conditions=["ordered"],
            subset_k=1,
            template_ids=[0],
            batch_size=4,
            out_dir=tmp_path / out,
            progress=True,
            batch_check=2,
        )
        card = json.loads((tmp_path / out / "r" / "run_card.json").read_text())
        check = card["runs"][-1].get("batch_invariance")
        assert (check["checked"] if check else None) == expected
    out = capsys.readouterr().out
    assert re.search(
        r"r: batch-1 check: \d of 2 answers regenerated alone differ from the same prompts' "
        r"answers in batches of 4",
        out,
    ), out
    demo = load_run(PARAMS_DIR / "runs" / "demo.yaml")
    dirs = Dirs(tmp_path / "g", tmp_path / "s", tmp_path / "r")
    asked = notebook_params("01_generate", demo, dirs, ["smollm2-135m-instruct"])
    assert asked.batch_check == demo.file.batch_check < 8  # the entries' own is 8
