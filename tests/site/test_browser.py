"""The report's landing page and case browser, opened from disk in headless Chromium."""

import os
import re

import pytest

from ocg.jobs.notebook_runner import run_notebook
from ocg.jobs.plan import Dirs, notebook_params
from ocg.site.landing import write_index
from tests.analysis.notebooks import MODELS
from tests.chromium import CHROMIUM, SCREENSHOTS, chromium, console_errors
from tests.helpers import checked_run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(scored):
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    out = scored / "site"
    cfg = checked_run(MODELS, ["ordered"], models_file=str(scored / "models.yaml"))
    dirs = Dirs(scored / "gen", scored / "scores", out)
    pages = []
    for nb in ("03_main_results", "08_concept_difficulty"):
        run_notebook(
            nb,
            {**notebook_params(nb, cfg, dirs, MODELS), "n_boot": 50}
            if nb.startswith("03")
            else notebook_params(nb, cfg, dirs, MODELS),
            out_dir=out,
        )
        pages.append((nb, f"{nb}.html"))
    run = checked_run(
        **{
            "models": MODELS + ["broken-model"],
            "conditions": ["original", "ordered", "ordered_one_shot"],
            "subset_k": 2,
            "n_concepts": 4,
            "file": "test",
        }
    )
    write_index(
        out,
        "ocg report: browser test",
        pages,
        run=run,
        scores_root=scored / "scores",
        generations_root=scored / "gen",
        failures={
            "broken-model": {"notebook": "01_generate", "cell": 3, "reason": "OSError: gone"}
        },
    )
    return out


def test_landing_page_in_a_real_browser(report):
    page = report / "index.html"
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('src="data:image/png;base64') == 2  # Figures 3 and 4 inline
    assert "<table" in html and "Ordered Rate" in html and "my-qwen" in html
    assert "paper's published numbers" in html  # my-qwen is the paper's Qwen2.5-7B
    assert 'href="cases.html"' in html and 'href="03_main_results.html"' in html
    assert re.search(
        r'href="03_main_results.results.html">03_main_results</a> \(<a href="03_main_results.html">with code',
        html,
    )
    assert re.search(r"broken-model.*failed</span> in 01_generate, cell 3: OSError: gone", html)
    assert "How much the open choices move Table 1" in html and "first occurrences only" in html
    assert "spaCy lemma (CommonGen" in html and "perplexity" in html
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = chromium(
        page.as_uri(), f"--screenshot={SCREENSHOTS / 'index.png'}", "--window-size=1300,2400"
    )
    assert shot.returncode == 0 and (SCREENSHOTS / "index.png").stat().st_size > 20_000


def test_case_browser_in_a_real_browser(report):
    page = report / "cases.html"
    assert (report / "cases").is_dir() and len(list((report / "cases").glob("*.js"))) == 2 * 3 * 6
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    body = dom.stdout.split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0]
    assert body.count('<tr class="case">') == 48  # 2 concept sets x 24 permutations, one page of 50
    assert "<mark" in dom.stdout and 'id="errors"></div>' in dom.stdout
    missed = chromium(
        page.as_uri() + "#model=my-qwen&condition=ordered&template=2&outcome=missed", "--dump-dom"
    ).stdout
    missed = missed.split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0]
    cells = re.findall(r'<td class="(ok|warn|bad)">', missed)
    assert cells and set(cells) == {"bad"}  # the filter keeps only answers that missed a concept
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = chromium(
        page.as_uri(), f"--screenshot={SCREENSHOTS / 'cases.png'}", "--window-size=1300,1600"
    )
    assert shot.returncode == 0 and (SCREENSHOTS / "cases.png").stat().st_size > 20_000
