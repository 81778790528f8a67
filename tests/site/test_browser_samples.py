"""The case browser in headless Chromium with answers holding astral-plane characters (emoji:
two UTF-16 units each in the page, one code point in Python) and a run of repeated samples
(each row its own sample's raw output, the sample named in the row and the CSV), and its notice
for `#sort=` and `#perm=` values it cannot use."""

import csv
import io
import re

import pytest

from ocg.site.chunks import spans
from ocg.site.landing import write_index
from tests.helpers import checked_run

CONCEPTS = ["bobsled", "jump", "push", "run"]
EMOJI = "😀😀😀😀 The bobsled jump push run."
ANSWERS = [EMOJI, "A bobsled 🏂 jump, a push, a run 😀.", "𝒜 bobsled jumps after a push and a run."]


def test_offsets_are_utf16_units_where_the_answer_holds_astral_characters():
    from ocg.site.chunks import utf16_spans

    tokens = ["😀😀😀😀", "The", "bobsled", "jump", "push", "run", "."]
    found = spans(EMOJI, tokens, [2, 3, 4, 5])
    assert [EMOJI[s:e] for s, e, _ in found] == CONCEPTS  # code points, as Python slices
    units = EMOJI.encode("utf-16-le")
    assert [
        units[2 * s : 2 * e].decode("utf-16-le") for s, e, _ in utf16_spans(EMOJI, found)
    ] == CONCEPTS
    assert utf16_spans("The run.", [[4, 7, 1]]) == [[4, 7, 1]]


@pytest.fixture(scope="module")
def cases(scored_run):
    from tests.chromium import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": p,
            "concepts": CONCEPTS,
            "pos_pattern": "NVVV",
            "sample": s,
            "answer": f"{ANSWERS[(p + s) % 3]} #{s}",
        }
        for p in range(3)
        for s in (0, 1)
    ]
    root = scored_run("samples", rows, ["coverage"], models=("a",))
    write_index(
        root / "report",
        "t",
        [],
        run=checked_run(**{"models": ["a"], "conditions": ["ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    )
    page = root / "report" / "cases.html"
    # a copy of the page that, once loaded, builds the CSV export and shows its text (a real Blob URL)
    probe = page.read_text(encoding="utf-8").replace(
        "</body>",
        "<script>setTimeout(async () => { exportCsv(shown); "
        "const t = await (await fetch($('csv').href)).text(); const pre = document.createElement('pre'); "
        "pre.id = 'csvtext'; pre.textContent = t; document.body.appendChild(pre); }, 1000);</script></body>",
    )
    (root / "report" / "probe.html").write_text(probe, encoding="utf-8")
    return page


def open_at(page, fragment=""):
    from tests.chromium import chromium, console_errors

    dom = chromium(page.as_uri() + fragment, "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    return dom.stdout


def case_rows(html):
    body = html.split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr class="case">(.*?)</tr>', body, re.S)


def unescape(text):
    return (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    )


@pytest.mark.slow
def test_highlights_cover_the_concepts_after_emoji(cases):
    rows = case_rows(open_at(cases))
    assert len(rows) == 6
    for row in rows:
        marked = re.findall(
            r"<mark title=\"concept (\d)\">(.*?)<sup>", row.split('<span class="answer">', 1)[1]
        )
        assert [word.lower() for _, word in marked][:1] == ["bobsled"], row
        assert {w.lower() for _, w in marked} <= {"bobsled", "jump", "jumps", "push", "run"}, row
        assert len(marked) == 4, row


@pytest.mark.slow
def test_each_sample_row_shows_its_own_raw_output_and_index(cases):
    rows = case_rows(open_at(cases))
    raws = [unescape(re.findall(r"<pre>(.*?)</pre>", row, re.S)[-1]) for row in rows]
    assert len(set(raws)) == 6  # each sample's own raw output, not the last sample's for both
    seen = set()
    for row in rows:
        sample = int(re.search(r"· sample (\d)</span>", row).group(1))
        raw = unescape(re.findall(r"<pre>(.*?)</pre>", row, re.S)[-1])
        assert raw.endswith(f" #{sample}"), row  # the raw output of this sample, not the last one's
        answer = unescape(
            re.sub(
                r"<sup>.*?</sup>|<[^>]+>",
                "",
                row.split('<span class="answer">', 1)[1].split("</span>", 1)[0],
            )
        )
        assert answer == raw
        seen.add((re.search(r"p(\d) ·", row).group(1), sample))
    assert len(seen) == 6


@pytest.mark.slow
def test_the_csv_names_each_answers_sample(cases):
    html = open_at(cases.parent / "probe.html")
    text = unescape(re.search(r'<pre id="csvtext">(.*?)</pre>', html, re.S).group(1))
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == 6 and {r["sample"] for r in table} == {"0", "1"}
    assert all(r["answer"].endswith(f" #{r['sample']}") for r in table)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fragment, message",
    [
        (
            "#sort=shortest",
            "The address asks for sort=shortest, which is not a sort order "
            "(length, outcome, slor, perplexity, judge_score); "
            "showing concept set, permutation.",
        ),
        ("#perm=abc", "The address asks for perm=abc, which is not a permutation number"),
        ("#perm=-1", "The address asks for perm=-1, which is not a permutation number"),
        ("#perm=1.5", "The address asks for perm=1.5, which is not a permutation number"),
    ],
)
def test_a_sort_or_permutation_the_page_cannot_use_is_named(cases, fragment, message):
    html = open_at(cases, fragment)
    assert message in html
    assert len(case_rows(html)) == 6  # shown unfiltered, in the default order
