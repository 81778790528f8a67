"""Executing the numbered notebooks headlessly with papermill, on the project's kernel."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
import uuid
from pathlib import Path

from ..config.requests import GenerateRequest, ScoringRequest, StepRequest, write_request
from ..core.errors import OcgInputError
from ..core.files import atomic_path, naming, refuse_link
from ..core.layout import ExecutedNotebook, outputs
from ..core.paths import NOTEBOOKS_DIR
from ..core.progress import bars_shown, relayed
from ..generation.servers.server import STOP_GRACE_S
from .notebook_parameters import check_parameters

KERNEL_NAME = "ocg"  # registered by `make install` inside .venv (`make kernel` for ~/.local)


def kernel_for_papermill() -> str:
    """The `ocg` kernel where it is registered, else this interpreter's own `python3` kernel.

    Either way the notebook runs in the environment of the Python running papermill, whatever
    the user's other Jupyter kernels are.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        return "python3"
    exe = Path(spec.argv[0])
    same_env = exe.exists() and exe.resolve().parent == Path(sys.executable).resolve().parent
    return KERNEL_NAME if same_env else "python3"


def find_notebook(name: str) -> Path:
    """`00_build_data`, `00_build_data.ipynb` or a path."""
    path = Path(name)
    if path.suffix != ".ipynb":
        path = path.with_suffix(".ipynb")
    if not path.exists():
        path = NOTEBOOKS_DIR / path.name
    if not path.exists() and not NOTEBOOKS_DIR.is_dir():
        raise OcgInputError(
            name,
            f"no notebooks in {NOTEBOOKS_DIR}: an installed ocg carries none; `ocg report` and "
            "the notebooks need a source checkout (git clone the project, then pip install -e .)",
        )
    if not path.exists():
        known = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))
        raise OcgInputError(name, f"no such notebook; known: {known}")
    return path


def _without_stderr(nb):
    """The notebook without what went to stderr (progress bars, library warnings): it says
    nothing about the results. Errors are kept; the executed .ipynb keeps everything."""
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell.outputs = [
                o
                for o in cell.get("outputs", [])
                if not (o.get("output_type") == "stream" and o.get("name") == "stderr")
            ]
    return nb


def to_html(executed: Path) -> Path:
    """The executed notebook as two pages: whole (code included) and its results alone."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = _without_stderr(nbformat.read(executed, as_version=4))
    pages = ExecutedNotebook(executed.parent, executed.stem)
    for path, exporter in (
        (pages.page, HTMLExporter()),
        (
            pages.results_page,
            HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True),
        ),
    ):
        body, _ = exporter.from_notebook_node(nb)
        with atomic_path(path) as tmp:
            tmp.write_text(body, encoding="utf-8")
    return pages.page


def _not_unknown_parameter(record: logging.LogRecord) -> bool:
    """papermill's parser skips annotations such as `int | None` and calls those names unknown;
    the names were checked against the parameters cell already (check_parameters)."""
    return not record.getMessage().startswith("Passed unknown parameter")


UNIX_SOCKET_PATH_MAX = 100  # sun_path holds 104 (macOS) to 108 (Linux) bytes


def kernel_transport() -> dict:
    """papermill's kernel over Unix sockets (IPC) where they work: the kernel is always local,
    the sockets are files only this user reads, and ipykernel then has no cause to warn, in every
    notebook of every run, that it "is running over TCP without encryption". TCP stays on Windows
    and where the runtime folder's path is too long for a socket name (its warning with it)."""
    from jupyter_core.paths import jupyter_runtime_dir
    from traitlets.config import Config

    # The sockets' path is named here, one per kernel: left to jupyter_client, it can default to
    # `kernel-ipc` in the working directory (notebooks/), shared by kernels that run at once (a
    # sweep's tasks, two reports), whose messages then cross ("Invalid Signature").
    ip = os.path.join(jupyter_runtime_dir(), f"kernel-{uuid.uuid4()}-ipc")
    if os.name != "posix" or len(f"{ip}-99".encode()) > UNIX_SOCKET_PATH_MAX:
        return {}
    os.makedirs(os.path.dirname(ip), exist_ok=True)
    return {"config": Config({"KernelManager": {"transport": "ipc", "ip": ip}})}


def _execute_stoppably(execute) -> None:
    """`execute(kernel_manager_class)` in a worker thread, this thread waiting: SIGTERM and Ctrl-C
    reach this thread's handlers (nbclient would take them over in its own), and on either the
    kernel's process group (the kernel and any worker it started) is stopped before the
    exception goes on. Left alone, the kernel would run on under PID 1, holding its locks."""
    import threading

    from jupyter_client import AsyncKernelManager

    groups: list[int] = []
    stopping, failure = threading.Event(), []

    class Tracked(AsyncKernelManager):
        async def _async_post_start_kernel(self, **kw):
            # its own session (jupyter_client's launcher: a LocalProvisioner's pgid or pid)
            group = getattr(self.provisioner, "pgid", None) or getattr(
                self.provisioner, "pid", None
            )
            if isinstance(group, int) and group != os.getpgrp():  # never this process's own
                groups.append(group)
            await super()._async_post_start_kernel(**kw)
            if stopping.is_set():
                raise RuntimeError("the notebook run was stopped while its kernel started")

    def work():
        try:
            execute(Tracked)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="papermill", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:
        stopping.set()
        deadline = time.monotonic() + 60
        _stop_groups(groups)
        while (
            worker.is_alive() and time.monotonic() < deadline
        ):  # a kernel starting now stops itself
            worker.join(0.5)
            _stop_groups(groups)
        raise
    if failure:
        raise failure[0]


# A kernel's SIGTERM to SIGKILL: longer than a server's (generation/server.py), which the kernel
# stops in its own process group on SIGTERM; a kernel killed first would leave the server running.
KERNEL_STOP_GRACE_S = STOP_GRACE_S + 5.0


def _stop_groups(groups: list[int], grace_s: float = KERNEL_STOP_GRACE_S) -> None:
    """SIGTERM to each process group, SIGKILL to what is left of it after `grace_s`."""
    if not any(map(_alive, groups)):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
        deadline = time.monotonic() + grace_s
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(map(_alive, groups)):
            time.sleep(0.1)


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def door(parameters: dict | StepRequest | None, executed: ExecutedNotebook) -> dict:
    """What papermill writes into the notebook's parameters: a step's request as the path of its
    JSON file (`request_file`, written now under the executed copy's folder, requests/), from
    which the notebook rebuilds the very object; other parameters as they are."""
    if isinstance(parameters, (GenerateRequest, ScoringRequest)):
        return {"request_file": str(write_request(parameters, executed.request).resolve())}
    return dict(parameters or {})


def run_notebook(
    name: str,
    parameters: dict | StepRequest | None = None,
    *,
    out_dir: str | Path | None = None,
    html: bool = True,
    progress: bool = False,
    out_name: str | None = None,
) -> Path:
    """Execute one notebook to `out_dir` (default outputs/notebooks); returns the executed copy.

    Every parameter must be declared by the notebook, with a value of its type (checked before a
    kernel starts); a step's request (GenerateRequest, ScoringRequest) crosses as its JSON file
    (`door`). A failing cell raises papermill's PapermillExecutionError naming the cell and
    error; the executed copy keeps everything up to the failure, with the error shown. The
    progress lines the notebook's code says (ocg/core/progress.py: generation's batches and
    projections, scoring's families) are copied to this process's output as they come.
    """
    import papermill as pm

    source = find_notebook(name)
    out_dir = Path(out_dir) if out_dir else outputs().notebooks
    if not isinstance(parameters, (GenerateRequest, ScoringRequest)):
        check_parameters(source, parameters or {}, f"{source.stem}: parameter ")
    out_dir.mkdir(parents=True, exist_ok=True)
    copy = ExecutedNotebook(out_dir, out_name or source.stem)
    executed = copy.copy
    refuse_link(copy.request)
    passed = door(parameters, copy)
    check_parameters(source, passed, f"{source.stem}: parameter ")
    refuse_link(executed)  # papermill writes the copy by its name, after every cell
    logger = logging.getLogger("papermill")
    logger.addFilter(_not_unknown_parameter)
    try:
        with relayed():
            _execute_stoppably(
                lambda kernel_class: pm.execute_notebook(
                    str(source),
                    str(executed),
                    parameters=passed,
                    kernel_name=kernel_for_papermill(),
                    cwd=str(source.parent),
                    progress_bar=progress and bars_shown(),  # never `\r` bars in a log
                    kernel_manager_class=kernel_class,
                    **kernel_transport(),
                )
            )
    except BaseException as exc:
        if html and executed.exists():
            with contextlib.suppress(
                ValueError, OSError
            ):  # a copy the failure left unreadable (full
                to_html(executed)  # disk): the failure itself is the story
        if isinstance(exc, OSError) and exc.filename is None:  # papermill writing the copy
            raise naming(exc, executed) from exc
        raise
    finally:
        logger.removeFilter(_not_unknown_parameter)
    if html:
        to_html(executed)
    return executed
