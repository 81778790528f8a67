"""The notebooks' kernel runs over Unix sockets, so ipykernel's warning that it "is running over
TCP without encryption" no longer appears in every notebook of every run."""

import subprocess
import sys

import nbformat

from ocg.core.paths import PROJECT_ROOT

RUN = """
import sys
from pathlib import Path
import ocg.jobs.notebook_runner as runner
runner.find_notebook = lambda name: Path(sys.argv[1])
runner.run_notebook("t", out_dir=sys.argv[2], html=False)
"""


def test_a_notebook_runs_without_the_tcp_warning(tmp_path):
    from ocg.jobs.notebook_runner import kernel_transport

    assert kernel_transport()["config"]["KernelManager"]["transport"] == "ipc"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
    nbformat.write(nb, tmp_path / "t.ipynb")
    result = subprocess.run(
        [sys.executable, "-c", RUN, str(tmp_path / "t.ipynb"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT_ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "without encryption" not in result.stderr + result.stdout
    executed = nbformat.read(tmp_path / "out" / "t.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "42\n"


def test_kernels_that_run_at_once_get_sockets_of_their_own(tmp_path):
    """Two notebooks at once from one working directory (a sweep's tasks, two reports): each
    kernel's sockets have their own path, so their messages never cross ("Invalid Signature")."""
    from ocg.jobs.notebook_runner import kernel_transport

    ips = {kernel_transport()["config"]["KernelManager"]["ip"] for _ in range(3)}
    assert len(ips) == 3 and all("kernel-ipc" != ip for ip in ips)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time; time.sleep(3); print(6 * 7)")]
    nbformat.write(nb, tmp_path / "t.ipynb")
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUN, str(tmp_path / "t.ipynb"), str(tmp_path / f"out{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=PROJECT_ROOT,
        )
        for i in range(2)
    ]
    for i, run in enumerate(runs):
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        assert (
            nbformat.read(tmp_path / f"out{i}" / "t.ipynb", as_version=4)
            .cells[0]
            .outputs[0]["text"]
            == "42\n"
        )
