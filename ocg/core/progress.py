"""Progress lines that reach the terminal where the user waits, also from inside a notebook.

A long step (generation's batches and their projection, the batch-1 check, scoring's families)
says where it stands with `say(line)`: the line is printed where the code runs (in a notebook,
into the executed copy) and, when OCG_PROGRESS_FILE names a file, appended to it. A notebook's
runner (ocg/jobs/notebook_runner.py) sets that variable for the kernel and copies each new line
to its own output as it comes: `make demo`, `ocg report` and a sweep's task log show one line per
update, while the kernel's progress bars and warnings stay in the executed notebook.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

PROGRESS_FILE = "OCG_PROGRESS_FILE"


def bars_shown(stream=None) -> bool:
    """Whether a progress bar may be drawn on `stream` (stderr by default): only on a terminal.
    Elsewhere (a log file, CI, a pipe) a bar's `\\r` redraws would pile up, so the step lines
    (`[i/n] name`, generation's `say` lines) are all there is; TQDM_DISABLE turns bars off too."""
    import sys

    s = stream if stream is not None else sys.stderr
    try:
        tty = bool(s.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    return tty and not os.environ.get("TQDM_DISABLE")


class ReaderMayLeave(io.TextIOBase):
    """A command's output stream whose reader may go away (`ocg report run.yaml | head -3`): the
    first write to the closed pipe points the descriptor at devnull and the work goes on, its
    output dropped (Python's docs, "Note on SIGPIPE"). Its exit status stays the work's own."""

    def __init__(self, stream):
        super().__init__()
        self._s, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._s.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._s.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._s.fileno())
            finally:
                os.close(devnull)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return not self.gone and self._s.isatty()

    def fileno(self) -> int:
        return self._s.fileno()

    @property
    def encoding(self):  # type: ignore[override]
        return self._s.encoding

    def __getattr__(self, name):
        return getattr(self._s, name)


def duration(seconds: float) -> str:
    """1 h 05 min, 12 min, 40 s: a projection's precision, no more."""
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min" if seconds >= 120 else f"{seconds} s"


def say(line: str) -> None:
    """Print one progress line (below any progress bar) and append it to OCG_PROGRESS_FILE."""
    _write(line)
    path = os.environ.get(PROGRESS_FILE)
    if path:
        # a line lost to a full disk or a removed file costs only the terminal its copy
        with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as fh:
            fh.write(" ".join(line.splitlines()) + "\n")


@contextlib.contextmanager
def stage(what: str) -> Iterator[None]:
    """A step that can take minutes under load (a model's load, an embedded model's conversion,
    a warm-up): a line when it starts and one with its seconds when it ends, so the terminal is
    never silent for long (a failure ends it with its own error instead)."""
    say(f"{what} ...")
    t0 = time.perf_counter()
    yield
    say(f"{what}: done in {time.perf_counter() - t0:.1f} s")


class _Tail(threading.Thread):
    """Copies each complete new line of `path` to `show`, every `every_s` seconds until stopped."""

    def __init__(self, path: Path, show: Callable[[str], None], every_s: float):
        super().__init__(name="ocg-progress", daemon=True)
        self.path, self.show, self.every_s = path, show, every_s
        self.stopping, self.offset, self.partial = threading.Event(), 0, b""

    def run(self) -> None:
        while not self.stopping.wait(self.every_s):
            self.drain()
        self.drain()

    def drain(self) -> None:
        with contextlib.suppress(OSError), self.path.open("rb") as fh:
            fh.seek(self.offset)
            chunk = fh.read()
        self.offset += len(chunk)
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            self.show(line.decode("utf-8", errors="replace"))


def _write(line: str) -> None:
    """`line` on stdout below any progress bar (tqdm redraws it), flushed at once: a sweep
    task's stdout is a log file, which Python would otherwise fill in blocks."""
    import sys

    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def _shown(line: str) -> None:
    _write(f"  {line}")  # under the step's own line; a bar of the parent's is redrawn below


@contextlib.contextmanager
def relayed(show: Callable[[str], None] = _shown, every_s: float = 0.5) -> Iterator[Path]:
    """While the block runs (a notebook's kernel started inside it inherits OCG_PROGRESS_FILE),
    every progress line said there is shown here by `show`. The file is a temporary one, removed
    afterwards; the variable is restored."""
    fd, name = tempfile.mkstemp(prefix="ocg-progress-", suffix=".log")
    os.close(fd)
    path, saved = Path(name), os.environ.get(PROGRESS_FILE)
    os.environ[PROGRESS_FILE] = str(path)
    tail = _Tail(path, show, every_s)
    tail.start()
    try:
        yield path
    finally:
        tail.stopping.set()
        tail.join()
        if saved is None:
            os.environ.pop(PROGRESS_FILE, None)
        else:
            os.environ[PROGRESS_FILE] = saved
        path.unlink(missing_ok=True)
