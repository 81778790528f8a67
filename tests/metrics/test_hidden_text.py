"""Text the matcher would misread, scored through the CLI: an invisible format
character glued to a concept is taken out before matching and flagged; a long run without a
space is cut before tagging (spaCy's tokenizer is quadratic on it) and flagged."""

import time

import pandas as pd

from ocg.cli import main
from ocg.metrics.textprep import LONG_RUN, for_matching
from tests.helpers import write_generations

HIDDEN = {  # answer -> (flag, concepts all present)
    "A dog\u200b runs in the park.": ("format_chars", True),
    "A \u202edog\u202c runs in the park.": (
        "format_chars",
        True,
    ),  # bidi override around the concept
    "A dog\u200bruns in the park.": ("format_chars", True),  # a zero-width space between two words
    "A \ufeffdog runs in the park.": ("format_chars", True),
    "A dog\x00 runs in the park.": ("format_chars", True),  # a NUL glued to a concept
    "A dog\x1bruns in the \x7fpark.": ("format_chars", True),  # escape and delete
    "A dog runs\tin the\npark.": (None, True),  # tab and newline: white space, no flag
    "A dog runs in the park " + "$" * 100_000 + ".": ("long_run", True),
    "A dog runs in the park.": (None, True),
}


def test_hidden_characters_and_long_runs_are_matched_and_flagged(tmp_path, capsys):
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": i,
            "concepts": ["dog", "run", "park"],
            "pos_pattern": "NVN",
            "answer": a,
        }
        for i, a in enumerate(HIDDEN)
    ]
    write_generations(tmp_path / "gen", "m", rows)
    started = time.perf_counter()
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "scores"),
                "--metrics",
                "coverage",
            ]
        )
        == 0
    )
    seconds = time.perf_counter() - started
    answers = pd.read_parquet(tmp_path / "scores" / "m" / "answers.parquet").sort_values(
        "perm_index"
    )
    for (answer, (flag, present)), (_, row) in zip(HIDDEN.items(), answers.iterrows()):
        assert bool(row["all_present"]) is present and bool(row["in_order"]) is present, answer[:60]
        assert [f for f in ("format_chars", "long_run") if row[f]] == ([flag] if flag else []), (
            answer[:60]
        )
    assert seconds < 120, (
        f"{seconds:.0f} s: the long run was tagged whole"
    )  # about 30 minutes before


def test_what_the_matcher_reads():
    assert for_matching("dog\u200bruns \u202edog\u202c foot\u00adball") == "dog runs dog football"
    run = "(" * (LONG_RUN + 50)
    assert for_matching(f"a {run} b") == "a " + " ( " * LONG_RUN + " b"
    assert for_matching("x" * (LONG_RUN + 5)) == "x" * LONG_RUN
    assert for_matching("A plain answer.") == "A plain answer."
    # control characters are read as spaces; ordinary white space stays as written
    assert for_matching("dog\x00 cat\x1bbird\x85x\ty") == "dog  cat bird\x85x\ty"
