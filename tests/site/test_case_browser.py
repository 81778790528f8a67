"""The case browser (ocg/site/browser.py), opened in headless Chromium: concept words as the
set's label, the answer as written with the concepts found highlighted, sorting, CSV export, an
address that follows the filters, and a visible message for a preset that matches nothing."""

import re

import pytest

from ocg.site.chunks import spans
from ocg.site.landing import write_index
from tests.chromium import open_at, rows_of
from tests.helpers import checked_run

ANSWERS = [
    "The boy rides a bike down the street.",
    "Push-ups: a boy, a bike.",
    "A street bike ridden by a boy",
    "The bike of the boy rode down the street, and the boy was happy with the ride.",
]


def test_spans_lie_in_the_answer_as_written():
    answer = "Push-Up: the boy rides."
    tokens = ["Push", "-", "Up", ":", "the", "boy", "rides", "."]
    assert spans(answer, tokens, [5, -1, 0]) == [[13, 16, 1], [0, 4, 3]]
    assert [answer[s:e] for s, e, _ in spans(answer, tokens, [5, 6])] == ["boy", "rides"]
    assert spans(None, tokens, [1]) == [] and spans("x", ["y"], [0]) == []


@pytest.fixture(scope="module")
def cases(scored_run):
    from tests.chromium import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    root = scored_run(
        "cases",
        lambda model, _: [
            {
                "set_id": "s1",
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": ANSWERS[(p + (model == "b")) % 4],
            }
            for t in (0, 1)
            for p in range(8)
        ],
        ["coverage"],
        models=("a", "b"),
    )
    write_index(
        root / "report",
        "t",
        [],
        run=checked_run(**{"models": ["a", "b"], "conditions": ["ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    )
    return root / "report" / "cases.html"


@pytest.mark.slow
def test_the_answer_as_written_with_the_concepts_found(cases):
    html = open_at(cases, "#model=a&condition=ordered&template=0")
    first = rows_of(html)[0]
    assert first.startswith("<td>bike, boy, ride, street<br>")  # the set's words, not a hash
    assert (
        '<span class="answer">The <mark title="concept 1">boy<sup>1</sup></mark> <mark title="concept 2">rides'
        '<sup>2</sup></mark> a <mark title="concept 3">bike<sup>3</sup></mark> down the '
        '<mark title="concept 4">street<sup>4</sup></mark>.</span>'
    ) in first
    assert '<option value="s1">bike, boy, ride, street</option>' in html


@pytest.mark.slow
def test_the_address_follows_the_filters_and_the_export_counts_them(cases):
    html = open_at(cases, "#model=b&outcome=missed")
    shown = rows_of(html)
    assert shown and all('class="bad">missed' in r for r in shown)
    assert (
        'id="permalink" href="#model=b&amp;condition=ordered&amp;template=0&amp;outcome=missed"'
        in html
    )
    assert re.search(
        rf'id="csv" download="cases.csv" href="#">export {len(shown)} answers \(CSV\)', html
    )  # built on click


@pytest.mark.slow
def test_sorting_by_answer_length(cases):
    lengths = [
        len(re.sub("<[^>]+>", "", re.search(r'<span class="answer">(.*?)</span>', r).group(1)))
        for r in rows_of(open_at(cases, "#model=a&sort=length"))
    ]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "fragment, message",
    [
        (
            "#model=a&template=9",
            "The address asks for template=9, which this report does not have (it has: 0, 1). "
            "Showing template 0 instead.",
        ),
        (
            "#model=a&outcome=misssed",
            "The address asks for outcome=misssed, which is not an outcome",
        ),
        (
            "#model=nope",
            "The address asks for model=nope, which this report does not have (it has: a, b). "
            "Showing model a instead.",
        ),
        ("#model=a&q=zzzz", "No answer matches these filters."),
        (
            "#model=a&perm=99",
            "The address asks for perm=99, which none of these answers has (they have "
            "permutations 0, 1, 2, 3, 4, 5, 6, 7); showing all permutations.",
        ),
    ],
)
def test_a_preset_that_matches_nothing_says_so(cases, fragment, message):
    shot = "cases_no_match.png" if fragment == "#model=a&template=9" else None
    html = open_at(cases, fragment, shot)
    assert message in html
    if "perm=" in fragment:  # every permutation shown, none hidden by the address
        assert len(rows_of(html)) == 8 and '<div id="nomatch" class="warn"></div>' in html


@pytest.mark.slow
def test_several_values_per_filter(cases):
    both = rows_of(open_at(cases, "#model=a,b&condition=ordered&template=0,1", "cases_multi.png"))
    assert len(both) == 2 * 2 * 8  # two models x two templates x 8 answers (one page of 50)
    assert {
        re.search(r"<td>(a|b)<br>ordered<br>template (0|1)</td>", r).groups() for r in both
    } == {("a", "0"), ("a", "1"), ("b", "0"), ("b", "1")}
    assert len(rows_of(open_at(cases, "#model=all&condition=all&template=all"))) == 32


@pytest.mark.slow
def test_one_instance_side_by_side_across_models(cases):
    html = open_at(cases, "#model=a&compare=s1~3~0", "cases_side_by_side.png")
    side = html.split('<table id="side">', 1)[1].split("</table>", 1)[0]
    lined = re.findall(r'<tr class="side"><td>(a|b)</td><td>ordered</td><td>(.*?)</td>', side)
    assert [m for m, _ in lined] == ["a", "b"]
    texts = [re.sub("<[^>]+>", "", re.sub("<sup>.*?</sup>", "", a)) for _, a in lined]
    assert texts == [
        ANSWERS[3 % 4],
        ANSWERS[4 % 4],
    ]  # model b answers the next one (see the fixture)
    assert "asked as boy → ride → bike → street (permutation 3, template 0)" in html


def test_csv_cells_are_quoted_and_never_formulas():
    """The page's own csvCell, run in Node: commas, quotes and line breaks quoted; a model's text
    starting with = + - @ is not read as a spreadsheet formula; a number stays a number (a
    negative SLOR is no formula), a missing or non-finite one an empty cell."""
    import json
    import os
    import shutil
    import subprocess

    from ocg.site.render import static_text

    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node missing in CI")
        pytest.skip("node is not installed")
    source = re.search(
        r"function csvCell\(v\) \{.*?\n\}", static_text("case_browser.js"), re.S
    ).group(0)
    cells = [
        "plain",
        "a, b",
        'say "hi"',
        "two\nlines",
        "cr\rhere",
        "=HYPERLINK(1)",
        "+1",
        "-2",
        "@x",
        None,
        -2,
        -5.8453,
        0,
        True,
    ]
    script = f"{json.dumps(cells)}.concat([NaN, Infinity]).map(csvCell)"
    out = subprocess.run(
        [node, "-e", source + f"\nconsole.log(JSON.stringify({script}))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == [
        "plain",
        '"a, b"',
        '"say ""hi"""',
        '"two\nlines"',
        '"cr\rhere"',
        "'=HYPERLINK(1)",
        "'+1",
        "'-2",
        "'@x",
        "",
        "-2",
        "-5.8453",
        "0",
        "true",
        "",
        "",
    ]


JUDGE_REPLIES = [  # a replay judge's replies to ANSWERS: agrees, agrees, disagrees (reads a reordered answer in order), none
    '{"score": 5, "order": ["boy", "ride", "bike", "street"]}',
    '{"score": 2, "order": ["boy", "bike"]}',
    '{"score": 3, "order": ["boy", "ride", "bike", "street"]}',
    "I cannot tell.",
]


@pytest.fixture(scope="module")
def judged_cases(scored_run, tmp_path_factory):
    """Model a's answers scored with a replay judge (scoring/judging.py) and put in a case browser."""
    import json

    import yaml

    from ocg.config.model_registry import MODELS_FILE
    from ocg.site.browser import write_case_browser_from

    here = tmp_path_factory.mktemp("judge")
    concepts = ["boy", "ride", "bike", "street"]
    (here / "replies.jsonl").write_text(
        "".join(
            json.dumps({"instance_id": json.dumps([a, concepts]), "answer": r}) + "\n"
            for a, r in zip(ANSWERS, JUDGE_REPLIES)
        )
    )
    (here / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "extends": str(MODELS_FILE),
                "models": {
                    "replayed-judge": {
                        "id": "a-judge",
                        "backend": "replay",
                        "replay": {"file": str(here / "replies.jsonl")},
                    }
                },
            }
        )
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ocg.config.model_registry.MODELS_FILE", here / "models.yaml")
        root = scored_run(
            "judged",
            [
                {
                    "set_id": "s1",
                    "template_id": 0,
                    "perm_index": p,
                    "concepts": concepts,
                    "pos_pattern": "NVNN",
                    "answer": ANSWERS[p % 4],
                }
                for p in range(8)
            ],
            ["coverage", "judge"],
            models=("a",),
            judge="replayed-judge",
        )
    return write_case_browser_from(root / "report", ["a"], root / "scores", root / "gen")


def test_the_judges_verdicts_sit_in_each_answers_row_and_their_disagreements_are_counted(
    judged_cases,
):
    from ocg.site.browser import read_index
    from ocg.site.chunks import read_chunk

    index = read_index(judged_cases)
    assert [(e["n"], e["n_judged"], e["n_judge_disagrees"]) for e in index] == [
        (8, 6, 2)
    ]  # ANSWERS[2] twice
    chunk = read_chunk(judged_cases.parent / index[0]["file"])
    rows = [dict(zip(chunk["fields"], r)) for r in chunk["rows"]]
    got = [
        (r["in_order"], r["judge_score"], r["judge_order"], r["judge_in_order"]) for r in rows[:4]
    ]
    assert got == [
        (True, 5.0, ["boy", "ride", "bike", "street"], True),
        (False, 2.0, ["boy", "bike"], False),
        (False, 3.0, ["boy", "ride", "bike", "street"], True),
        (False, None, None, None),
    ]


@pytest.mark.slow
def test_the_judge_disagrees_filter(judged_cases):
    from tests.chromium import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    html = open_at(judged_cases, "#model=a", "cases_judge.png")
    assert (
        "8 answers, page 1 of 1; the judge's order verdict differs from ocg's on 2 of 6 judged"
        in html
    )
    assert "judge 5/5, reads boy ride bike street: in order</span>" in rows_of(html)[0]
    assert "judge, unjudged: unparsed</span>" in rows_of(html)[3]  # with its reason
    shown = rows_of(open_at(judged_cases, "#model=a&outcome=judge_disagrees"))
    assert len(shown) == 2 and all(
        "A street bike ridden by a boy" in r
        and '<span class="judge bad">judge 3/5, reads boy ride bike street: in order (disagrees)'
        in r
        for r in shown
    )
    by_filter = open_at(judged_cases, "#model=a&judge=disagrees")
    assert (
        len(rows_of(by_filter)) == 2
        and "answers: model a, condition ordered, template 0, the judge disagrees, sorted"
        in by_filter
    )
    assert len(rows_of(open_at(judged_cases, "#model=a&judge=unjudged"))) == 2  # ANSWERS[3] twice
    rated = rows_of(open_at(judged_cases, "#model=a&sort=judge_score&dir=asc"))
    scores = [re.search(r'<span class="judge[^"]*">judge(?: (\d)/5)?', r).group(1) for r in rated]
    assert scores == ["2", "2", "3", "3", "5", "5", None, None]  # unrated last
