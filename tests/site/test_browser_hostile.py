"""A report built from hostile inputs (a run file's note, model entries, answers that hold HTML
and script) opens in headless Chromium with every page's title and DOM untouched: each such text
is shown as written, and no script of it runs."""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ocg.generation import select_instances
from ocg.jobs.plan import ANALYSES
from ocg.scoring import cpu_families
from tests.chromium import CHROMIUM, chromium, console_errors

pytestmark = pytest.mark.slow

# Each payload, if it became markup, would change the title or add an element we look for.
PAYLOADS = [
    "<img src=x onerror=\"document.title='pwned'\">",
    "<script>document.title='pwned'</script>",
    "\"'><svg onload=\"document.title='pwned'\"></svg>",
    "</script><script>document.title='pwned'</script>",
    "<iframe srcdoc=\"<script>parent.document.title='pwned'</script>\"></iframe>",
]
INJECTED = re.compile(
    r"<(img|svg|iframe)[^>]*(src=\"x\"|onload|srcdoc)|<script>document\.title", re.I
)
RUN = dict(
    name="hostile",
    models=["synth-a", "synth-b"],
    conditions=["original", "ordered", "ordered_one_shot"],
    subset_k=2,
    template_ids=[0, 1],
    metrics=cpu_families(),
    table7_pairs={"synth-b": "synth-a"},
    table7_note=" ".join(PAYLOADS),
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    root = tmp_path_factory.mktemp("hostile")
    instances = select_instances(None, RUN["conditions"], RUN["subset_k"], RUN["template_ids"])
    models = {}
    for n, model in enumerate(RUN["models"]):
        answers = root / f"{model}.jsonl"  # every answer carries a payload, most also the concepts
        answers.write_text(
            "".join(
                json.dumps(
                    {
                        "instance_id": iid,
                        "answer": f"{PAYLOADS[(i + n) % len(PAYLOADS)]} The {' '.join(concepts)}."
                        if i % 7
                        else PAYLOADS[i % len(PAYLOADS)],
                    }
                )
                + "\n"
                for i, (iid, concepts) in enumerate(zip(instances.instance_id, instances.concepts))
            )
        )
        models[model] = {
            "backend": "replay",
            "id": f"x/{model} {PAYLOADS[n]}",
            "replay": {"file": str(answers)},
            "paper_name": PAYLOADS[2],
        }
    (root / "models.yaml").write_text(yaml.safe_dump({"models": models}))
    (root / "run.yaml").write_text(
        yaml.safe_dump({**RUN, "models_file": str(root / "models.yaml")})
    )
    env = dict(os.environ, OCG_OUTPUTS=str(root / "outputs"))
    proc = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "report", str(root / "run.yaml")],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (index,) = (root / "outputs").rglob("index.html")
    return index.parent


def title_and_dom(page):
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    title = re.search(r"<title>(.*?)</title>", dom.stdout, re.S)
    return (title.group(1) if title else ""), dom.stdout


def test_every_page_of_a_hostile_report_is_untouched(report):
    pages = sorted(report.glob("*.html"))
    names = {p.name for p in pages}
    assert {
        "index.html",
        "cases.html",
        "07_reasoning_models.html",
        "09_cases.html",
        "01_generate-synth-a.html",
        "07_reasoning_models.results.html",
        "methods.html",
    } <= names
    # index, cases, methods; each notebook (build, 2 generates, score, the analyses) whole and results only
    assert len(pages) == 2 + 1 + 2 * (1 + 2 + 1 + len(ANALYSES))
    shown = {}
    for page in pages:
        title, dom = title_and_dom(page)
        source_title = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.S)
        assert "pwned" not in title and title == (source_title.group(1) if source_title else ""), (
            page.name
        )
        assert not INJECTED.search(dom), (page.name, INJECTED.search(dom).group(0))
        shown[page.name] = dom
    # the hostile texts were shown, as written
    assert (
        "&lt;img src=x onerror=\"document.title='pwned'\"&gt;" in shown["07_reasoning_models.html"]
    )  # the run file's note
    assert (
        "&lt;img src=x onerror=\"document.title='pwned'\"&gt;"
        in shown["07_reasoning_models.results.html"]
    )
    assert (
        "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in shown["09_cases.html"]
    )  # answers
    assert "x/synth-a &lt;img src=x" in shown["index.html"]  # the model entry's id
    rows = shown["cases.html"].split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0]
    assert rows.count('<tr class="case">') == 48 and "&lt;/script&gt;&lt;script&gt;" in rows
