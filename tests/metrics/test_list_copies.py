"""Answers that copy the concept list (docs/METHODS.md, "Answers that copy the list"): the flags
scoring stores, recomputed by another route (a regex over the answer text's lookup lemmas, no
tagger), and the sensitivity view's "excluding answers that copy the list" recomputed from it."""

import itertools
import re

import pandas as pd
import pytest

from ocg.analysis import copies
from ocg.analysis.sensitivity import largest_shifts, table1_sensitivity, wide
from ocg.metrics.listcopy import list_flags_of
from tests.helpers import checked_run

CONCEPTS, POS = ["boy", "ride", "bike", "street"], "NVNN"
ANSWERS = [
    "Boy ride bike street.",  # copies, bare
    "The boy, the ride and a bike; the street.",  # copies (glue only), bare
    "The boy rides a bike down the street.",  # in order, no copy
    "Boy, bike, ride, street.",  # bare, out of order
    "A boy saw a bike; the boy rode the bike on the street.",  # in order at boy's 2nd mention
    "Boy ride bike street is what the sign says.",  # copies, not bare
    "The boy and his bike.",  # two missing
    "He saw a boy. Boy ride bike, street!",
]  # copies at boy's 2nd mention
GLUE = r"(?:\s+(?:and|a|an|the|[^\w\s]+))*\s+"


@pytest.fixture(scope="module")
def scored(scored_run):
    rows = [
        {
            "set_id": "s1",
            "template_id": t,
            "perm_index": i,
            "concepts": CONCEPTS,
            "pos_pattern": POS,
            "answer": a,
        }
        for t in (0, 1)
        for i, a in enumerate(ANSWERS[t * 3 :] + ANSWERS[: t * 3])
    ]
    out = (
        scored_run(
            "copies",
            lambda _, condition: rows if condition == "ordered" else rows[:5],
            ["coverage"],
            conditions=("ordered", "original"),
        )
        / "scores"
        / "m"
    )
    return out, pd.read_parquet(out / "answers.parquet")


def _lemmas(text: str) -> list[str]:
    """The answer's words and punctuation runs, each word as spaCy's lookup table lemmatises it."""
    from spacy.lookups import load_lookups

    table = load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")
    return [
        table.get(w.lower(), w.lower()) if w[0].isalnum() else w
        for w in re.findall(r"\w+|[^\w\s]+", text)
    ]


def independent(text: str) -> dict:
    """Present, in order, copies_list and bare_list from the text alone."""
    lemmas = _lemmas(text)
    hits = [[i for i, w in enumerate(lemmas) if w == c] for c in CONCEPTS]
    present = all(hits)
    in_order = present and any(
        all(a < b for a, b in zip(s, s[1:])) for s in itertools.product(*hits)
    )
    joined = " " + " ".join(lemmas)
    copies = in_order and re.search(r"\s" + GLUE.join(CONCEPTS) + r"(?!\w)", joined) is not None
    bare = present and all(
        w in CONCEPTS or re.fullmatch(r"and|a|an|the|[^\w\s]+", w) for w in lemmas
    )
    return {"all_present": present, "in_order": in_order, "copies_list": copies, "bare_list": bare}


def test_the_stored_flags_agree_with_a_regex_over_the_text(scored):
    _, answers = scored
    assert (
        answers["copies_list"].any()
        and answers["bare_list"].any()
        and not answers["copies_list"].all()
    )
    for r in answers.itertuples():
        assert {
            k: bool(getattr(r, k)) for k in ("all_present", "in_order", "copies_list", "bare_list")
        } == independent(r.answer), r.answer
    summary = pd.read_parquet(scored[0] / "summary.parquet")
    ordered = summary[summary.condition == "ordered"]
    assert ordered["n_copies_list"].sum() == 2 * sum(independent(a)["copies_list"] for a in ANSWERS)


def test_copy_share_and_excluded_w_order_recomputed_from_the_text(scored):
    _, answers = scored
    ordered = answers[answers.condition == "ordered"]
    verdicts = pd.DataFrame([independent(a) for a in ordered["answer"]], index=ordered.index)
    # the share of in-order answers that copy the list (Table 1's caption line)
    share = verdicts["copies_list"].sum() / verdicts["in_order"].sum()
    assert share == pytest.approx(ordered["copies_list"].sum() / ordered["in_order"].sum())
    assert share == pytest.approx(4 / 6)
    # w/o, w/ and Ordered Rate on the rest, pooled over templates (so OR = w/ / w/o holds)
    rest = verdicts[~verdicts["copies_list"]]
    wo, w = 100 * rest["all_present"].mean(), 100 * rest["in_order"].mean()
    rate = 100 * rest["in_order"].sum() / rest["all_present"].sum()
    view = table1_sensitivity(answers)
    excluded = view[(view.choice == copies.CHOICE) & (view.variant == copies.EXCLUDED)].set_index(
        "metric"
    )
    assert excluded.at["coverage_wo_order", "value"] == pytest.approx(wo)
    assert excluded.at["coverage_w_order", "value"] == pytest.approx(w)
    assert (
        excluded.at["ordered_rate", "value"] == pytest.approx(rate) == pytest.approx(100 * w / wo)
    )
    assert (excluded["n_answers"] == len(rest)).all() and len(rest) == len(ordered) - 8
    shifts = [s for s in largest_shifts(view) if s.startswith("copies as failures")]
    assert shifts and f"over all {len(ordered)} ordered answers" in shifts[0]
    shown = wide(view, "copies")
    assert shown[(copies.EXCLUDED, "answers")].str.startswith(f"{len(rest)} / ").all()


@pytest.mark.parametrize(
    "tokens, first, used, flags",
    [
        (["Push", ",", "run", "&", "jump"], [0, 2, 4], [0, 2, 4], (True, True)),
        (
            ["Push", "then", "run", "jump"],
            [0, 2, 3],
            [0, 2, 3],
            (False, False),
        ),  # "then" is no glue
        (["Run", "push", "jump", "."], [1, 0, 2], [1, 0, 2], (False, True)),  # bare, out of order
        # a later mention as the concept word itself ("run" after "running") stands for it too
        (["Cat", "running", "run", "push", "jump", "."], [1, 3, 4], [1, 3, 4], (True, False)),
    ],
)
def test_glue_is_punctuation_and_the_three_words(tokens, first, used, flags):
    in_order = used == sorted(used)
    got = list_flags_of(
        tokens, first, used, all_present=True, in_order=in_order, concepts=["run", "push", "jump"]
    )
    assert (got["copies_list"], got["bare_list"]) == flags


@pytest.mark.slow
def test_methods_states_how_often_real_outputs_copy_the_list():
    """The measured figure in docs/METHODS.md is what benchmarks/list_copies.py measures (and the
    flags it finds agree with the text route wherever that route sees a copy)."""
    from ocg.core.paths import PROJECT_ROOT
    from tests.helpers import benchmark

    m = benchmark("list_copies").measure()
    assert len(m) == 2496
    text = (
        (PROJECT_ROOT / "docs" / "METHODS.md")
        .read_text()
        .split("**How often real outputs do it.**")[1]
    )
    said = re.search(
        r"(\d+) are in order and (\d+) copies the list \((\S+)% of all outputs",
        " ".join(text.split()),
    )
    assert said, "METHODS states the figure"
    assert (int(said[1]), int(said[2])) == (int(m.in_order.sum()), int(m.copies_list.sum()))
    assert said[3] == f"{100 * m.copies_list.mean():.2f}" and ("none is a bare list" in text) == (
        not m.bare_list.any()
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "outcome, wanted",
    [
        ("copies_list", lambda v: v["copies_list"]),
        ("bare_list", lambda v: v["bare_list"]),
        ("order_not_copied", lambda v: v["in_order"] and not v["copies_list"]),
    ],
)
def test_the_case_browser_filters_them(scored, outcome, wanted):
    from tests.chromium import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from ocg.site.landing import write_index
    from tests.chromium import open_at, rows_of

    out, _ = scored
    root = out.parent.parent
    write_index(
        root / "report",
        "t",
        [],
        run=checked_run(**{"models": ["m"], "conditions": ["ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    )
    shown = rows_of(
        open_at(
            root / "report" / "cases.html",
            f"#model=m&condition=ordered&template=0&outcome={outcome}",
        )
    )
    texts = [
        re.sub(
            "<sup>.*?</sup>|<[^>]+>",
            "",
            re.search(r'<span class="answer">(.*?)</span>', r, re.S).group(1),
        )
        for r in shown
    ]
    expected = [a for a in ANSWERS if wanted(independent(a))]
    assert sorted(texts) == sorted(expected) and expected
