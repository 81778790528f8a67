"""Facts the code owns, where prose repeats them: a test fails when the two disagree.

- A range of notebooks ("the analyses (NN-NN)") in any tracked text file (README, docs, code,
  help, job scripts, sweep files, tests, notebooks' cells) names one the plan runs
  (ocg/core/notebook_names.py), as do the help texts built from it.
- docs/METHODS.md's table of the matching rules' precision and recall, and the sample it was
  measured on, are ocg/metrics/matching.py's MATCHING_QUALITY (which tests/metrics/test_matching.py
  recomputes from the labelled pairs).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from ocg.core.notebook_names import ALL_SPAN, ANALYSES, ANALYSES_SPAN, MODEL_NOTEBOOKS, span
from ocg.core.paths import PROJECT_ROOT
from ocg.metrics.matching import MATCHING_QUALITY, MATCHING_RULES

NOTEBOOK_RANGE = re.compile(r"(?<![\d-])(\d\d)-(\d\d)(?![\d-])")
METHODS = PROJECT_ROOT / "docs" / "METHODS.md"


def tracked_text_files() -> list[Path]:
    """Every file git tracks that reads as UTF-8 text (the working tree where git is absent)."""
    try:
        names = subprocess.run(
            ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True, text=True
        ).stdout.split("\0")
        paths = [PROJECT_ROOT / n for n in names if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", ".venv-tf4", ".venv-tf5", "outputs"}
        paths = [
            p
            for p in PROJECT_ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(PROJECT_ROOT).parts)
        ]
    texts = []
    for path in paths:
        try:
            path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        texts.append(path)
    return texts


def prose_lines(path: Path) -> list[str]:
    """The lines a reader sees: a notebook's cells (not its JSON, whose cell ids look like ranges)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
    return text.splitlines()


def wrong_ranges(lines: list[str], where: str) -> list[str]:
    """Ranges of notebooks that the plan does not have: one from 00 or from the first analysis
    that does not end at the last analysis, or one past the model notebooks' from 01."""
    first, last = ANALYSES[0][:2], ANALYSES[-1][:2]
    models_end = MODEL_NOTEBOOKS[-1][:2]
    wrong = []
    for n, line in enumerate(lines, 1):
        for m in NOTEBOOK_RANGE.finditer(line):
            start, end = m.groups()
            if start in ("00", first) and end != last or start == "01" and end > models_end:
                wrong.append(f"{where}:{n}: {m.group(0)}")
    return wrong


def test_texts_name_only_notebook_ranges_the_plan_has():
    files = tracked_text_files()
    assert (
        PROJECT_ROOT / "README.md" in files
        and PROJECT_ROOT / "notebooks" / f"{ANALYSES[0]}.ipynb" in files
    )
    wrong = [
        w for f in files for w in wrong_ranges(prose_lines(f), str(f.relative_to(PROJECT_ROOT)))
    ]
    assert not wrong, (
        f"notebook ranges that disagree with ocg/core/notebook_names.py (analyses {ANALYSES_SPAN}): {wrong}"
    )


def test_the_range_check_sees_a_stale_range():
    stale = (
        f"{ANALYSES[0][:2]}-{ANALYSES[-3][:2]}"  # what README said when the analyses ended earlier
    )
    assert wrong_ranges([f"the analyses ({stale}) and notebooks {ALL_SPAN}"], "x") == [
        f"x:1: {stale}"
    ]
    assert (
        wrong_ranges(
            [f"notebooks {span(MODEL_NOTEBOOKS)} per model, then {ANALYSES_SPAN}; 2026-12-02"], "x"
        )
        == []
    )


def test_help_texts_name_the_plans_ranges():
    assert span(ANALYSES) == ANALYSES_SPAN and ALL_SPAN == f"00-{ANALYSES[-1][:2]}"
    help_text = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert f"then {ANALYSES_SPAN}" in help_text and f"run notebooks {ALL_SPAN}" in help_text
    assert f"notebooks {span(MODEL_NOTEBOOKS)} per model" in help_text


def methods_table_disagreements(text: str) -> list[str]:
    """Where docs/METHODS.md's matching table (3 places) or its sample sizes differ from MATCHING_QUALITY."""
    head = "| rule | precision (sample) | recall (sample) | precision (population) | recall (population) |"
    assert head in text, "docs/METHODS.md: the matching rules' table is gone"
    rows = {}
    for line in text.split(head, 1)[1].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
        rule = re.search(r"`(\w+)`", cells[0]).group(1)
        rows[rule] = cells[1:]
    problems = (
        [f"rules in the table {sorted(rows)}, in the code {sorted(MATCHING_RULES)}"]
        if sorted(rows) != sorted(MATCHING_RULES)
        else []
    )
    for rule in set(rows) & set(MATCHING_RULES):
        q = MATCHING_QUALITY[rule]
        code = [
            f"{q[part][what]:.3f}"
            for part in ("sample", "population_weighted")
            for what in ("precision", "recall")
        ]
        if rows[rule] != code:
            problems.append(f"{rule}: METHODS says {rows[rule]}, matching.py {code}")
    strata = MATCHING_QUALITY["strata"]
    sizes = [
        f"**Measured** on {MATCHING_QUALITY['labelled_pairs']} (sentence, concept) pairs",
        f"The population is the {sum(s['population'] for s in strata.values()):,} (answer, concept) pairs",
        *(
            f"({s['labelled']:,} of {s['population']:,}"
            for n, s in strata.items()
            if n != "constructed"
        ),
        f"`constructed`, {strata['constructed']['labelled']} sentences",
        f"ocg's population recall {MATCHING_QUALITY['pos_aware_lookup']['population_weighted']['recall']} "
        f"against {MATCHING_QUALITY['commongen_lemma']['population_weighted']['recall']}",
    ]
    flowing = " ".join(text.split())  # a figure may be wrapped onto the next line
    return problems + [f"not in METHODS: {s!r}" for s in sizes if s not in flowing]


def test_methods_matching_table_is_the_codes():
    problems = methods_table_disagreements(METHODS.read_text())
    assert not problems, "docs/METHODS.md disagrees with ocg/metrics/matching.py:\n" + "\n".join(
        problems
    )


def test_the_table_check_sees_a_changed_figure_or_size():
    text = METHODS.read_text()
    q = MATCHING_QUALITY["any_lookup"]["sample"]["recall"]
    row = next(line for line in text.splitlines() if "(`any_lookup`)" in line)
    changed = text.replace(row, row.replace(f"{q:.3f}", f"{q - 0.01:.3f}", 1))
    assert [p.split(":")[0] for p in methods_table_disagreements(changed)] == ["any_lookup"]
    resized = text.replace("(491 of 491)", "(490 of 491)")  # a stratum relabelled in METHODS alone
    assert methods_table_disagreements(resized) == ["not in METHODS: '(491 of 491'"]


def test_methods_names_every_function_word_tag_the_matcher_skips():
    """METHODS' list of function words (rule 3 never applies to them) is token_forms.py's _FUNCTION_POS."""
    from ocg.metrics.token_forms import _FUNCTION_POS

    text = " ".join(METHODS.read_text().split())
    listed = text.split("never for function words (", 1)[1].split(");", 1)[0]
    assert {t for t in _FUNCTION_POS if re.search(rf"\b{t}\b", listed)} == set(_FUNCTION_POS), (
        listed
    )


def test_methods_copies_no_figure_from_a_past_run():
    """A figure measured on a run is generated from it (the report shows it) or recomputed by a
    test; none is kept as "measured by" an audit of a run that later code no longer makes (issue
    46.8: the demo's figures went stale when its batch size moved)."""
    text = " ".join(METHODS.read_text().split())
    assert not re.search(r"measured by the issue-\d+ audit", text)
    for stale in (
        "45.83 / 45.14",
        "55.56 -> 54.86",
        "14 of 32 (43.8%)",
        "18 of the 29",
        "20.8% of the demo",
    ):
        assert stale not in text, stale


def test_methods_gives_the_flags_version_the_code_has():
    from ocg.metrics.degenerate import FLAGS_VERSION

    text = (Path(__file__).resolve().parents[1] / "docs" / "METHODS.md").read_text()
    said = re.search(r"`FLAGS_VERSION`, (\d+)", text)
    assert said and int(said.group(1)) == FLAGS_VERSION
