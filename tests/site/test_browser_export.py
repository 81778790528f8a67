"""The case browser of a report `ocg report` built (a replay model, coverage and perplexity with
the embedded model, so SLOR holds negative values), driven in headless Chromium by playwright:
the CSV export reads back with every number a number, negative ones included; an address whose
`compare=` the page cannot apply is dropped from "link to this view", a valid one kept."""

import csv
import io
import json
import math
import os
import subprocess
import sys

import hypothesis.strategies as st
import pytest
import yaml
from hypothesis import given, settings

from ocg.generation import select_instances

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
RUN = dict(
    name="export",
    models=["rp"],
    conditions=["ordered"],
    subset_k=2,
    permutations=2,
    template_ids=[0],
    metrics=["coverage", "perplexity", "slor"],
    scoring={"perplexity_fallback": "embedded:smollm2-135m-instruct"},
    analysis=["03_main_results"],
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM}")
    pytest.importorskip("playwright.sync_api")
    root = tmp_path_factory.mktemp("export")
    instances = select_instances(None, RUN["conditions"], RUN["subset_k"], RUN["template_ids"])
    garbled = "zq xv {} qq {} zzv {} {} kk."  # a garbled sentence: a negative SLOR
    lines = [
        {
            "instance_id": iid,
            "answer": (garbled.format(*c) if i % 2 else f"The {' '.join(c)}.").replace("=", ""),
        }
        for i, (iid, c) in enumerate(zip(instances.instance_id, instances.concepts))
    ]
    (root / "rp.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    models = {"rp": {"backend": "replay", "id": "x/rp", "replay": {"file": str(root / "rp.jsonl")}}}
    (root / "models.yaml").write_text(yaml.safe_dump({"models": models}))
    (root / "run.yaml").write_text(
        yaml.safe_dump({**RUN, "models_file": str(root / "models.yaml")})
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "report", str(root / "run.yaml")],
        capture_output=True,
        text=True,
        env=dict(os.environ, OCG_OUTPUTS=str(root / "outputs")),
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (cases,) = (root / "outputs").rglob("cases.html")
    return cases


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, page_file, fragment=""):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_file.as_uri() + fragment)
    page.wait_for_selector("tr.case")
    page.wait_for_timeout(500)  # the comparison's own load, after the rows
    assert not errors, errors
    return page


def test_the_csv_export_keeps_negative_numbers_numbers(report, browser):
    page = _open(browser, report)
    text = page.evaluate(
        "async () => { exportCsv(shown); return await (await fetch(document.getElementById('csv').href)).text(); }"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 2 * 2  # 2 sets x 2 orders, one template and condition
    slor = [r["slor"] for r in rows]
    assert all(v != "" for v in slor), slor
    values = [float(v) for v in slor]  # a `'-5.8` would not read as a number
    assert any(v < 0 for v in values), values
    for name in ("perplexity", "perm_index", "template_id"):
        assert all(float(r[name]) == float(r[name]) for r in rows), name
    # text that starts like a formula is still guarded
    assert all(not r["answer"].startswith(("=", "+", "-", "@")) for r in rows)
    page.close()


@pytest.mark.parametrize("fragment", ["#compare=nope~1~0", "#compare=a~b", "#compare=s~x~0"])
def test_a_compare_the_page_cannot_apply_leaves_the_link_to_this_view(report, browser, fragment):
    page = _open(browser, report, fragment)
    page.wait_for_function("document.getElementById('notice').textContent.includes('compare')")
    assert "compare=" not in page.get_attribute("#permalink", "href")
    assert "compare=" not in page.evaluate("location.hash")
    assert page.inner_text("#compare") == ""
    page.close()


def test_a_compare_the_page_applies_stays_in_the_link(report, browser):
    page = _open(browser, report)
    page.click("a.cmp >> nth=0")
    page.wait_for_selector("#side")
    href = page.get_attribute("#permalink", "href")
    assert "compare=" in href
    again = _open(browser, report, href)
    again.wait_for_selector("#side")
    assert again.get_attribute("#permalink", "href") == href
    page.close()
    again.close()


_FORMULA = "=+-@\t\r"  # what a spreadsheet reads as a formula's start (csvCell guards them)
_NUMBERS = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(-1e4, 1e4).map(lambda x: round(x, 4))  # -5.8453, SLOR's kind
    | st.integers(-(2**53), 2**53)
    | st.sampled_from([-0.0, 1e21, -1e-7, 5e-324, float("nan"), float("inf"), float("-inf")])
)
_TEXTS = st.tuples(
    st.sampled_from(["", *_FORMULA]),
    st.text(st.characters(blacklist_characters="\x00"), max_size=12)
    | st.floats(allow_nan=False).map(lambda x: f"{x}")  # text that reads as a number
    | st.floats(-1e4, 1e4).map(lambda x: f"{x:.4f}"),
).map("".join)


@pytest.fixture(scope="module")
def export_page(report, browser):
    page = _open(browser, report)
    yield page
    page.close()


@settings(max_examples=25, deadline=None)
@given(st.lists(_NUMBERS | _TEXTS | _TEXTS | st.booleans() | st.none(), min_size=40, max_size=120))
def test_the_csv_export_keeps_every_number_a_number_and_guards_every_formula(export_page, values):
    """The page's exportCsv over rows of generated cells (each value the answer and the SLOR of
    an answer shown): a finite number reads back as itself, never behind a ', a missing or
    infinite one is empty; a text is itself, with a ' before a formula's first character (=, +,
    -, @, tab, CR), numeric-looking text included."""
    text = export_page.evaluate(
        """async (values) => {
          const it = shown[0];
          exportCsv(values.map((v) => {
            const row = [...it.row];
            row[it.c.ix.answer] = v;
            row[it.c.ix.slor] = v;
            return {e: it.e, c: it.c, row};
          }));
          return await (await fetch(document.getElementById('csv').href)).text();
        }""",
        values,
    )
    head, *rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(values)
    for row, value in zip(rows, values, strict=True):
        for cell in (row[head.index("answer")], row[head.index("slor")]):
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                assert cell == ""
            elif isinstance(value, bool):
                assert cell == str(value).lower()
            elif isinstance(value, (int, float)):
                assert float(cell) == value, (cell, value)  # a `'-5.8` is no number
            else:
                assert cell == ("'" + value if value.startswith(tuple(_FORMULA)) else value)
