"""`make lab` (ocg/jobs/lab.py): JupyterLab on 127.0.0.1 with a token and the ocg kernel; and,
in a real Chromium (playwright on the system browser), a numbered notebook opened from the lab's
file tree, run with Run All Cells on a small scored run, showing its figure."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ocg.core.paths import PROJECT_ROOT
from ocg.jobs import lab
from tests.analysis.conftest import scored  # noqa: F401 (a fixture, found by its name)
from tests.chromium import CHROMIUM

NOTEBOOK = "08_concept_difficulty.ipynb"  # Figures 3 and 4, from the scores alone
SHOTS = Path("/tmp/shots")


def test_the_command_listens_on_localhost_with_the_token_and_the_ocg_kernel(tmp_path):
    argv = lab.command(8899, "t0k3n", tmp_path)
    assert Path(argv[0]).parent == Path(sys.executable).parent  # this venv's jupyter
    assert argv[1] == "lab"
    assert "--ServerApp.ip=127.0.0.1" in argv and "--ServerApp.port=8899" in argv
    assert "--IdentityProvider.token=t0k3n" in argv and f"--ServerApp.root_dir={tmp_path}" in argv
    assert "--MappingKernelManager.default_kernel_name=ocg" in argv
    assert lab.command(8899, "x")[argv.index(f"--ServerApp.root_dir={tmp_path}")] == (
        f"--ServerApp.root_dir={PROJECT_ROOT}"  # make lab: the project, notebooks and outputs
    )
    text = lab.how_to_open(8899, "t0k3n")
    assert "http://127.0.0.1:8899/lab?token=t0k3n" in text
    assert "ssh -N -L 8899:127.0.0.1:8899 " in text


def test_a_token_is_fresh_unless_given(monkeypatch):
    monkeypatch.delenv("OCG_LAB_TOKEN", raising=False)
    a, b = lab.token(), lab.token()
    assert a != b and len(a) == 48
    monkeypatch.setenv("OCG_LAB_TOKEN", "mine")
    assert lab.token() == "mine"


def test_a_port_in_use_is_skipped():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert lab.free_port(port) != port


def _wait_up(port: int, token: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5
            ) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"jupyter lab did not answer on port {port} in {seconds} s")


@pytest.mark.slow
def test_a_numbered_notebook_runs_in_the_lab_and_shows_its_figure(scored, tmp_path):  # noqa: F811
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    root = tmp_path / "project"  # a copy: the lab's autosave never touches the checkout's notebook
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "notebooks" / NOTEBOOK, root / "notebooks" / NOTEBOOK)
    port, token = lab.free_port(18888), lab.token()
    env = {
        **os.environ,
        "OCG_OUTPUTS": str(scored),  # its scores/: the notebook's default `scores_dir`
        "JUPYTER_PREFER_ENV_PATH": "1",
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),  # no user settings
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
    }
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        lab.command(port, token, root),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_up(port, token, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/lab?token={token}", timeout=120_000)
            # open it from the file tree, as a user does
            page.locator(".jp-DirListing-item", has_text="notebooks").dblclick(timeout=120_000)
            page.locator(".jp-DirListing-item", has_text=NOTEBOOK).dblclick(timeout=60_000)
            kernel = page.locator(".jp-NotebookPanel-toolbar .jp-Toolbar-kernelName")
            kernel.filter(has_text="Python (ocg)").wait_for(timeout=120_000)
            page.locator(".jp-NotebookPanel-toolbar [data-status='idle']").wait_for(timeout=120_000)
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            figure = page.locator(".jp-OutputArea-output img").first
            figure.wait_for(timeout=300_000)
            assert figure.evaluate("img => img.naturalWidth") > 100
            page.locator(".jp-NotebookPanel-toolbar [data-status='idle']").wait_for(timeout=300_000)
            errors = page.locator("[data-mime-type='application/vnd.jupyter.error']")
            assert errors.count() == 0, errors.first.inner_text()
            assert page.locator(".jp-OutputArea-output img").count() >= 2  # Figures 3 and 4
            SHOTS.mkdir(parents=True, exist_ok=True)
            figure.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / "lab-notebook-08.png"))
            browser.close()
    finally:
        with contextlib.suppress(ProcessLookupError):  # the server we started, and its kernels
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
