"""docs/DATA.md against real frames: every column `load_scores` returns is documented, and every
column documented for the families scored is there."""

import re

import pytest

from ocg.core.paths import PROJECT_ROOT
from ocg.metrics.coverage import MATCHING_RULES
from ocg.metrics.degenerate import FLAG_COLUMNS
from ocg.results.scores import load_scores

SCORED = {
    "always",
    "coverage",
    "pbleu",
    "distinct",
    "diverse",
    "perplexity",
}  # what the fixture scores
KEYS = {"model", "condition", "template_id", "scoring_signature", "n_samples"}


def documented(frame: str) -> dict[str, str]:
    """column -> when, for one frame's table in docs/DATA.md, patterns expanded."""
    text = (PROJECT_ROOT / "docs" / "DATA.md").read_text()
    section = text.split(f"## {frame}\n", 1)[1].split("\n## ", 1)[0]
    out, text_columns = {}, set()
    for name, when, kind in re.findall(r"^\| `([^`]+)` \| ([^|]+?) \| ([^|]+?) \|", section, re.M):
        if kind.startswith("str"):  # a text column (e.g. JSON) has no spread across samples
            text_columns.add(name)
        names = [name]
        if "<rule>" in name:
            names = [name.replace("<rule>", r) for r in MATCHING_RULES]
        if "<flag>" in name:
            names = [name.replace("<flag>", f) for f in FLAG_COLUMNS]
        out.update({n: when for n in names})
    if (
        "<metric>_sample_sd" in out
    ):  # each metric column of the summary (not a count, key or reason)
        when = out.pop("<metric>_sample_sd")
        out.update(
            {
                f"{c}_sample_sd": when
                for c in list(out)
                if c not in KEYS
                and c not in text_columns
                and not c.startswith("n_")
                and not c.endswith("_missing_reason")
            }
        )
    return out


def _scored(scored_run, name, samples=None):
    rows = [
        {
            "set_id": "s1",
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": ["The boy rides a bike down the street.", "A boy."][(p + s) % 2],
            **({"sample": s} if samples else {}),
        }
        for t in (0, 1)
        for p in range(24)
        for s in range(samples or 1)
    ]
    root = scored_run(
        name,
        rows,
        ["coverage", "pbleu", "distinct", "diverse", "perplexity"],
        perplexity_batch_size=8,
        perplexity_fallback="embedded:smollm2-135m-instruct",
    )  # as the demo: the embedded model, no hub
    return load_scores(root / "scores")


# The frames hold perplexity, scored by the embedded model: the tests that read them are slow.
@pytest.fixture(scope="module")
def frames(scored_run):
    return _scored(scored_run, "dictionary")


@pytest.fixture(scope="module")
def sampled_frames(scored_run):
    return _scored(scored_run, "dictionary_samples", samples=2)


@pytest.mark.slow
@pytest.mark.parametrize("frame", ["answers", "groups", "summary"])
@pytest.mark.parametrize("sampled", [False, True])
def test_every_column_is_documented_and_every_documented_column_is_there(
    frames, sampled_frames, frame, sampled
):
    docs, got = documented(frame), getattr(sampled_frames if sampled else frames, frame)
    assert set(got.columns) - set(docs) == set(), "columns missing from docs/DATA.md"
    expected = {
        c
        for c, when in docs.items()
        if when in SCORED | ({"samples"} if sampled else set())
        and not (c.startswith(("perplexity", "pbleurt")) and c.endswith("_sample_sd"))
        and not (c.endswith("_sample_sd") and docs.get(c.removesuffix("_sample_sd")) not in SCORED)
    }
    assert expected - set(got.columns) == set(), "documented, yet not in the frame"
    assert sampled or not {c for c, when in docs.items() if when == "samples"} & set(got.columns)


@pytest.mark.slow
def test_the_convenience_columns_read_as_the_prompt(frames):
    a = frames.answers.iloc[0]
    assert a["concept_words"] == "boy ride bike street"
    assert (
        a["template"]
        == "Concepts: {concepts}\n\nWrite a sentence that includes all these words in the specified order."
    )


@pytest.mark.slow
def test_match_positions_index_tokens_and_minus_one_means_missing(frames):
    a = frames.answers
    full = a[a.answer == "The boy rides a bike down the street."].iloc[0]
    assert [full["tokens"][i] for i in full["match_positions"]] == [
        "boy",
        "rides",
        "bike",
        "street",
    ]
    short = a[a.answer == "A boy."].iloc[0]
    assert list(short["match_positions"]) == [1, -1, -1, -1]


@pytest.mark.parametrize("frame", ["answers", "groups", "summary"])
def test_the_check_on_read_knows_every_documented_column(frame):
    from ocg.scoring.dictionary import columns

    checked = columns()[frame]
    assert set(checked) == {c for c in documented(frame) if not c.endswith("_sample_sd")}
    assert {when for when, _ in checked.values()} >= {"always"}
    assert all(kind.strip() for _, kind in checked.values())


def test_data_md_frame_tables_are_generated_from_the_code():
    """docs/DATA.md's three frame tables are what ocg/scoring/frame_columns/ generates
    (`python -m ocg.scoring.frame_columns` rewrites them): the schema lives in code, the doc follows."""
    from ocg.scoring.frame_columns import current_text

    text = (PROJECT_ROOT / "docs" / "DATA.md").read_text()
    assert current_text(text) == text, (
        "docs/DATA.md is stale: run `python -m ocg.scoring.frame_columns`"
    )


def test_the_check_on_read_works_outside_a_checkout(tmp_path):
    """No document is read at run time: the package copied alone (no docs/ beside it) still
    knows every column it checks."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(
        PROJECT_ROOT / "ocg",
        tmp_path / "site" / "ocg",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    code = (
        f"import ocg, ocg.scoring.dictionary as d; assert ocg.__file__.startswith({str(tmp_path)!r}), ocg.__file__; "
        "print(len(d.columns()['answers']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    from ocg.scoring.dictionary import columns

    assert int(out.stdout) == len(columns()["answers"])
