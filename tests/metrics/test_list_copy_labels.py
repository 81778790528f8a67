"""The list-copy flag against answers labelled by reading (tests/fixtures/list_copy_labels.jsonl, issue
46.6): the precision docs/METHODS.md states is recomputed here, and a sentence that composes
its concepts is no copy while true copies still are."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from ocg.core.paths import PROJECT_ROOT
from ocg.metrics.listcopy import flag_texts

LABELS = Path(__file__).parents[1] / "fixtures" / "list_copy_labels.jsonl"


def _flags(texts, concepts, patterns):
    return flag_texts(pd.Series(texts), pd.Series(concepts), pd.Series(patterns))[
        "copies_list"
    ].tolist()


def test_a_sentence_that_composes_its_concepts_is_no_copy_and_copies_still_are():
    concepts, pos = ["demonstrate", "sew", "use", "machine"], "VVVN"
    texts = [
        "The person who demonstrated sewing using a machine is a skilled craftsman.",  # the example
        "Demonstrate sew use machine.",
        "Demonstrate, sewing, use and machine.",
        "The person demonstrates sew use machine.",
        "1. Demonstrate sew use machine",
    ]
    assert _flags(texts, [concepts] * len(texts), [pos] * len(texts)) == [
        False,
        True,
        True,
        True,
        True,
    ]


def _labelled() -> pd.DataFrame:
    rows = [
        json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    df = pd.DataFrame(rows)
    return df.assign(flagged=_flags(df["answer"], df["concepts"], df["pos_pattern"]))


def test_methods_states_the_flag_s_precision_on_the_labelled_answers():
    df = _labelled()
    assert set(df["source"]) == {"demo", "commongen_eval_5concept"} and df["copy"].dtype == bool
    assert not df.assign(key=df["concepts"].map(" ".join)).duplicated(["answer", "key"]).any()
    copies, flagged = int(df["copy"].sum()), df[df["flagged"]]
    text = " ".join(
        (PROJECT_ROOT / "docs" / "METHODS.md")
        .read_text()
        .split("**How precise the flag is.**")[1]
        .split()
    )
    said = re.search(
        r"version 3 flagged (\d+) distinct answers, (\d+) of them copies \(precision ([\d.]+)%\); "
        r"version 4 flags (\d+), (\d+) of them copies \(precision ([\d.]+)%\), and keeps (\d+) of the (\d+)",
        text,
    )
    assert said, "METHODS states the precision"
    assert said.groups() == (
        str(len(df)),
        str(copies),
        f"{100 * copies / len(df):.1f}",
        str(len(flagged)),
        str(int(flagged["copy"].sum())),
        f"{100 * flagged['copy'].mean():.1f}",
        str(int(flagged["copy"].sum())),
        str(copies),
    )
    assert flagged["copy"].mean() > copies / len(df)  # narrower, and more precise


@pytest.mark.parametrize(
    "answer",
    [
        "The person demonstrated sewing using a machine.",
        "The machine demonstrates sewing using a sewing machine.",
    ],
)
def test_labelled_sentences_are_not_flagged(answer):
    df = _labelled()
    row = df[df["answer"] == answer].iloc[0]
    assert not row["copy"] and not row["flagged"]
