"""The case browser's quality columns (ocg/site/case_quality.py): each answer's PoS-correct coverage,
non-words, SLOR and perplexity in its chunk where scored, left out where not; on the page (headless
Chromium) beside the order verdict, filtered and sorted from the address, with a line that says
what the view holds, and an address followed in the same tab that resets what it leaves out."""

import re

import numpy as np
import pandas as pd
import pytest

from ocg.records import Signature
from ocg.site.browser import BASE_FIELDS, write_chunks, write_page
from ocg.site.case_quality import QUALITY_COLUMNS, missing_columns
from ocg.site.chunks import read_chunk
from tests.chromium import CHROMIUM, chromium, console_errors, open_at, rows_of

# answer, in_order, pos_all_present, pos_in_order, has_nonword, nonwords, slor, perplexity
ANSWERS = [
    ("The boy rides a bike down the street.", True, True, True, False, [], 3.2, 40.0),
    ("A boy zorbles his bike on the street.", True, True, False, True, ["zorbles"], 1.1, 210.5),
    ("Street bike boy ride.", True, False, False, False, [], -0.4, 900.0),
    ("The street saw a boy ride a bike.", False, True, False, False, [], 2.5, 55.0),
    ("Boy.", False, False, False, True, ["<b>x</b>", "qq"], None, None),
    (
        "The boy's blorp rides the bike down the street.",
        True,
        True,
        True,
        True,
        ["blorp"],
        0.7,
        120.0,
    ),
]


def frame(model, template, quality=True):
    rows = []
    for p, (answer, order, pos_all, pos_order, flag, words, slor, ppl) in enumerate(ANSWERS):
        row = {
            "instance_id": f"ordered-t{template}-s1-p{p}",
            "model": model,
            "condition": "ordered",
            "template_id": template,
            "set_id": "s1",
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": answer,
            "answer_status": "ok",
            "all_present": order or p == 3,
            "in_order": order,
        }
        if quality:
            row |= {
                "pos_all_present": pos_all,
                "pos_in_order": pos_order,
                "has_nonword": flag,
                "nonwords": np.array(words, dtype=object),
                "slor": np.nan if slor is None else slor,
                "perplexity": np.nan if ppl is None else ppl,
            }
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """Model a scored for quality in templates 0 and 1; model b (template 0) not: 18 answers."""
    out = tmp_path_factory.mktemp("quality")
    answers = pd.concat([frame("a", 0), frame("a", 1), frame("b", 0, quality=False)])
    return out, write_chunks(out, answers, {})


def test_the_chunks_carry_the_quality_columns_scored_and_leave_out_the_rest(page):
    out, index = page
    chunks = {(e["model"], e["template_id"]): read_chunk(out / e["file"]) for e in index}
    scored = chunks["a", 0]
    assert scored["fields"] == [*BASE_FIELDS, *QUALITY_COLUMNS]
    got = [dict(zip(scored["fields"], r)) for r in scored["rows"]]
    assert [[r[c] for c in QUALITY_COLUMNS] for r in got] == [
        [pos_all, pos_order, flag, words, slor, ppl]
        for _, _, pos_all, pos_order, flag, words, slor, ppl in ANSWERS
    ]  # NaN (an answer under two tokens) as null
    assert chunks["b", 0]["fields"] == BASE_FIELDS  # another model's columns hold nothing here


def test_a_family_scored_as_missing_leaves_its_columns_out(tmp_path):
    path = tmp_path / "signature.json"
    Signature(
        metrics=["coverage", "perplexity", "slor"],
        families={"coverage": {}, "perplexity": {"status": "missing"}, "slor": {"status": "ok"}},
    ).write(path)
    gone = missing_columns(path)
    assert {"perplexity", "ppl_status"} <= gone
    assert not gone & {"slor", "has_nonword", "pos_in_order", "in_order"}
    assert missing_columns(tmp_path / "absent.json") == set()


def quality_of(row):
    cell = re.search(r'<td class="quality">(.*?)</td>', row).group(1)
    return re.sub("<[^>]+>", " ", cell).split()


@pytest.fixture(scope="module")
def cases(page):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    out, index = page
    return write_page(out, index)


@pytest.mark.slow
def test_sorted_by_slor_and_filtered_from_the_address(cases):
    html = open_at(
        cases, "#model=a&template=all&nonword=yes&sort=slor&dir=desc", "cases_quality.png"
    )
    shown = rows_of(html)
    answers = [re.search(r'<span class="answer">(.*?)</span>', r).group(1) for r in shown]
    assert answers == [ANSWERS[i][0] for i in (1, 1, 5, 5, 4, 4)]  # SLOR 1.1, 0.7, none last
    assert [q for q in quality_of(shown[0]) if q[0].isdigit()] == ["1.10", "210.5"]
    assert "SLOR – perplexity –" in " ".join(quality_of(shown[-1]))
    assert (
        '<p id="view">showing 6 of 18 answers: model a, condition ordered, templates all, '
        "with a non-word, sorted by SLOR descending</p>" in html
    )
    # the non-words as text, never markup
    assert (
        '<span class="nonword">&lt;b&gt;x&lt;/b&gt;</span>, <span class="nonword">qq</span>' in html
    )
    ascending = rows_of(open_at(cases, "#model=a&inorder=yes&pos=no&sort=perplexity&dir=asc"))
    assert [re.search(r'<span class="answer">(.*?)</span>', r).group(1) for r in ascending] == [
        ANSWERS[1][0],
        ANSWERS[2][0],
    ]  # in order, not PoS-correct: perplexity 210.5 before 900
    assert all('<td class="ok">all present, in order' in r for r in ascending)


@pytest.mark.slow
def test_an_unscored_model_has_no_quality_and_says_why_a_filter_is_off(cases):
    html = open_at(cases, "#model=b&nonword=yes&sort=slor")
    assert len(rows_of(html)) == 6 and all('<td class="quality"></td>' in r for r in rows_of(html))
    assert (
        "These answers carry no non-word flags (the nonword family): the nonword filter is off."
        in html
    )
    assert (
        "showing 6 of 18 answers: model b, condition ordered, template 0, sorted by concept set"
        in html
    )


@pytest.mark.slow
def test_an_address_followed_in_the_tab_keeps_nothing_it_leaves_out(cases):
    """The page opens on model b's answers containing "boy", sorted by SLOR; then a link to
    `#condition=ordered&inorder=no` is followed: the rest takes its defaults (the first model and
    template, no text filter, no sort)."""
    opened = open_at(cases, "")  # no address: the first model and template, and the page says so
    assert (
        '<p id="view">showing 6 of 18 answers: model a, condition ordered, template 0, '
        "sorted by concept set, permutation</p>" in opened
    )
    hop = cases.with_name("hop.html")
    hop.write_text(
        cases.read_text(encoding="utf-8").replace(
            "</body>",
            '<script>setTimeout(() => { location.hash = "#condition=ordered&inorder=no"; }, 1500)'
            "</script></body>",
        ),
        encoding="utf-8",
    )
    dom = chromium(hop.as_uri() + "#model=b&q=boy&sort=length", "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    assert (
        '<p id="view">showing 2 of 18 answers: model a, condition ordered, template 0, '
        "not in order, sorted by concept set, permutation</p>" in dom.stdout
    )
    assert (
        'id="permalink" href="#model=a&amp;condition=ordered&amp;template=0&amp;inorder=no"'
        in dom.stdout
    )
    assert len(rows_of(dom.stdout)) == 2


def test_the_page_script_writes_no_markup_from_strings():
    """Every row is built from DOM nodes, each text from the data a text node: the script never
    assigns innerHTML or outerHTML, nor calls insertAdjacentHTML or document.write."""
    from ocg.site.render import static_text

    script = static_text("case_browser.js")
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", script)
    assert "textContent" in script and "createElement" in script
