"""Headless Chromium for the tests that open the report's pages (tests/analysis/ and the case
browser's filters in tests/metrics/): where it is, a page's DOM with its console errors checked,
and the case browser's rows."""

import re
import shutil
import subprocess

from ocg.core.paths import PROJECT_ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = PROJECT_ROOT / "outputs" / "screenshots"


def chromium(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=8000",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def console_errors(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line and re.search(r"Uncaught|Error", line)
    ]


def open_at(page, fragment, screenshot=None):
    dom = chromium(page.as_uri() + fragment, "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    if screenshot:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = chromium(
            page.as_uri() + fragment,
            f"--screenshot={SCREENSHOTS / screenshot}",
            "--window-size=1300,1400",
        )
        assert shot.returncode == 0 and (SCREENSHOTS / screenshot).stat().st_size > 20_000
    return dom.stdout


def rows_of(html):
    return re.findall(
        r"<tr class=\"case\">(.*?)</tr>",
        html.split('<tbody id="rows">', 1)[1].split("</tbody>", 1)[0],
        re.S,
    )
