"""Long work shows its progress where the user waits: the progress lines said inside a notebook
(ocg/core/progress.py) reach the terminal of the command that runs it while it runs, one line per
update, and the notebook's progress bars do not."""

import os
import subprocess
import sys
import time

import nbformat
import pytest

from ocg.core.paths import PROJECT_ROOT
from ocg.core.progress import PROGRESS_FILE, relayed, say

SAYS = (
    "import time\n"
    "from tqdm import tqdm\n"
    "from ocg.core.progress import say\n"
    "for _ in tqdm(range(200), desc='a bar'):\n"
    "    pass\n"
    "say('model: 48 of 144 answers in 66 s; about 2 min left at this pace')\n"
    "time.sleep({pause})\n"
    "say('model: 144 of 144 answers, in 3 min')\n"
)


def test_lines_said_in_a_child_process_are_shown_before_it_ends(tmp_path):
    shown = []
    with relayed(show=lambda line: shown.append((line, time.monotonic())), every_s=0.1) as path:
        child = subprocess.Popen(
            [sys.executable, "-c", SAYS.format(pause=3)],
            env=dict(os.environ),  # OCG_PROGRESS_FILE, as a notebook's kernel inherits it
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        child.wait(timeout=120)
        ended = time.monotonic()
    assert [line for line, _ in shown] == [
        "model: 48 of 144 answers in 66 s; about 2 min left at this pace",
        "model: 144 of 144 answers, in 3 min",
    ]
    assert ended - shown[0][1] > 2, "the first line came only as the child ended"
    assert not path.exists() and PROGRESS_FILE not in os.environ  # cleaned up, restored


def test_say_prints_where_no_runner_listens(capsys, monkeypatch):
    monkeypatch.delenv(PROGRESS_FILE, raising=False)
    say("m: 4 of 8 answers in 2 s; about 2 s left at this pace")
    assert capsys.readouterr().out == "m: 4 of 8 answers in 2 s; about 2 s left at this pace\n"


@pytest.mark.slow
def test_a_notebooks_progress_lines_reach_the_terminal_while_it_runs(tmp_path):
    notebook = tmp_path / "says.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SAYS.format(pause=8))]
    nbformat.write(nb, notebook)
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "ocg.cli", "run-notebook", str(notebook), "--out", "nb"]
    seen = []
    with subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        for line in proc.stdout:
            seen.append((line.rstrip("\n"), time.monotonic()))
        ended = time.monotonic()
    out = "\n".join(line for line, _ in seen)
    assert proc.returncode == 0, out
    first = [
        t
        for line, t in seen
        if line == "  model: 48 of 144 answers in 66 s; about 2 min left at this pace"
    ]
    assert first and ended - first[0] > 5, out  # shown while the notebook still ran
    assert "  model: 144 of 144 answers, in 3 min" in out.splitlines()
    assert "a bar" not in out, out  # the notebook's bars stay in the executed copy
    executed = nbformat.read(tmp_path / "nb" / "says.ipynb", as_version=4)
    assert "48 of 144 answers" in str(executed.cells[0].outputs)  # and the lines there too
