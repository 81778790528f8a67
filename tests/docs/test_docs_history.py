"""History where history belongs: README.md and docs/METHODS.md hold no dated or
machine-specific measurement. Dates and commits live in CHANGELOG.md and benchmarks/results/,
and a doc shows them only in a block generated from a results file. METHODS is rendered into
every report (ocg/site/explain.py, write_methods), so it holds no such block at all."""

import re

import pytest

from ocg.core.paths import PROJECT_ROOT

ISO_DATE = re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b")
# 7 to 40 hex digits holding a digit and a letter: a commit, not a number or a word such as "added"
COMMIT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
GENERATED = re.compile(r"<!-- benchmark:[\w-]+[^>]*-->.*?<!-- /benchmark -->", re.S)
README, METHODS = PROJECT_ROOT / "README.md", PROJECT_ROOT / "docs" / "METHODS.md"


def history(text: str) -> list[str]:
    """Dates and commit hashes outside the generated blocks."""
    prose = GENERATED.sub("", text)
    return [m[0] for m in ISO_DATE.finditer(prose)] + [m[0] for m in COMMIT.finditer(prose)]


@pytest.mark.parametrize("path", [README, METHODS], ids=["README", "METHODS"])
def test_no_dates_or_commits_outside_generated_blocks(path):
    assert history(path.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_date_and_a_commit_but_not_a_block_or_a_word():
    text = (
        "Measured on 2026-12-03 at 85908e4.\n"
        "<!-- benchmark:demo -->\n_Latest: 2026-12-04, commit 17db849._\n<!-- /benchmark -->\n"
        "The grammar's sha256 is added; 2,985,984 answers; deadbeef faded.\n"
    )
    assert history(text) == ["2026-12-03", "85908e4"]


def test_methods_has_no_machine_specific_measurement():
    """No generated block (its figures are one machine's), no GPU or CPU model, no load."""
    text = " ".join(METHODS.read_text(encoding="utf-8").split())
    assert "<!-- benchmark:" not in text
    for word in ("H100", "H200", "A100", "EPYC", "2-core", "on this machine", "idle machine"):
        assert word not in text, word
    assert not re.search(r"\d+(\.\d+)? ?(ms|tokens/s|answers/s)\b", text)


def test_methods_states_the_pinned_prompt_date_the_code_uses():
    """The date is written in words (no ISO date in METHODS), and is the code's default."""
    import datetime

    from ocg.config.model_registry import DEFAULT_PROMPT_DATE

    said = re.search(
        r"`prompt_date` \(default (\d+ \w+ \d{4})", " ".join(METHODS.read_text().split())
    )
    assert said, "METHODS states prompt_date's default"
    assert datetime.datetime.strptime(said[1], "%d %B %Y").date().isoformat() == DEFAULT_PROMPT_DATE


def test_methods_padding_figures_are_those_of_their_results_file():
    """ "Padding to a multiple" quotes benchmarks/results/ocg_overhead.json (padded lengths and the
    extra prompt tokens at each multiple: arithmetic on the prompts, the same on any machine)."""
    import json

    shapes = json.loads(
        (PROJECT_ROOT / "benchmarks" / "results" / "ocg_overhead.json").read_text()
    )["padded_shapes"]
    text = " ".join(METHODS.read_text().split())
    said = re.search(
        r"the padded lengths go from (\d+) distinct values to (\d+) at a multiple of 8, for (\d+)% "
        r"more prompt tokens \(16: (\d+) values, (\d+)%; 32: (\d+) value, (\d+)%",
        text,
    )
    assert said, "METHODS states the padded shapes"

    def at(multiple):
        m = shapes[f"multiple_{multiple}"]
        return [m["distinct_padded_lengths"], round(100 * m["padding_share"])]

    lengths_1, _ = at(1)
    assert [int(x) for x in said.groups()] == [lengths_1, *at(8), *at(16), *at(32)]


ISSUE_REFERENCE = re.compile(r"\b[Ii]ssues? #?\d+")


def test_no_file_points_at_a_tracker_a_reader_does_not_have():
    """What an "issue N" meant is said in words: a reader of the code, the docs or a report has
    no access to the tracker the number points to (CHANGELOG.md keeps history, not references)."""
    folders = ("ocg", "docs", "tests", "benchmarks", "notebooks", "params")
    files = [PROJECT_ROOT / "README.md"] + [
        p
        for folder in folders
        for p in (PROJECT_ROOT / folder).rglob("*")
        if p.suffix in {".py", ".md", ".ipynb", ".yaml", ".jsonl", ".html", ".js"}
    ]
    assert len(files) > 100
    found = [
        f"{p.relative_to(PROJECT_ROOT)}: {m[0]}"
        for p in files
        for m in ISSUE_REFERENCE.finditer(p.read_text(encoding="utf-8"))
        if p.name != "test_docs_history.py"
    ]
    assert found == []
