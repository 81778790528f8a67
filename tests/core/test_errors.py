"""Two error roots: every failure ocg defines is an OcgError (an Exception), every interruption an
OcgInterrupted (not an Exception, as Ctrl-C is not); each kind gives the command's exit status, and
the command line turns each into one `ocg: error:` line."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pickle
import pkgutil
from pathlib import Path

import pytest

import ocg
from ocg.cli import main
from ocg.core.errors import OcgError, OcgFault, OcgInputError, OcgInterrupted
from ocg.core.interrupts import StopRequested, Terminated
from ocg.core.lock import LockHeld, exclusive
from ocg.generation.backends.openai_answer import ApiError

PACKAGE = Path(ocg.__file__).parent
# where the kinds mix in a built-in exception (ValueError, RuntimeError, KeyboardInterrupt)
KIND_MODULES = {PACKAGE / "core" / "errors.py", PACKAGE / "core" / "interrupts.py"}
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def exception_classes() -> dict[str, type]:
    """Every exception class defined at the top of a module of ocg (or in a class of one)."""
    found = {}
    for info in pkgutil.walk_packages(ocg.__path__, "ocg."):
        if info.name.endswith(".__main__"):  # runs the command line when imported
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, BaseException):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_exception_of_ocg_derives_from_one_of_the_two_roots():
    classes = exception_classes()
    assert {"ocg.core.lock.LockHeld", "ocg.generation.backends.openai_answer.ApiError"} <= set(
        classes
    )
    assert len(classes) >= 15
    roots = (OcgError, OcgInterrupted)
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, roots))
    assert outside == []
    for name, cls in classes.items():
        # a failure is an Exception (so `except Exception` catches it); an interruption never
        # is, as Ctrl-C is not
        assert issubclass(cls, Exception) == issubclass(cls, OcgError), name
        assert issubclass(cls, OcgError) != issubclass(cls, OcgInterrupted), name


def test_a_users_except_exception_catches_an_ocg_error_but_not_an_interruption():
    from ocg.core.interrupts import StopRequested

    for error in (OcgInputError("runs/a.yaml: seed", "expected an integer"), LockHeld("m", "x")):
        try:
            raise error
        except Exception as caught:  # what a user's code around a call of ocg writes
            assert caught is error
    with pytest.raises(StopRequested):
        try:
            raise StopRequested("m: stopped")
        except Exception:  # pragma: no cover - an interruption is not a failure
            pytest.fail("an interruption was caught as an Exception")


def test_no_class_anywhere_derives_from_a_builtin_exception_outside_the_kinds():
    """Classes inside functions, too, which importing the modules does not show."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in KIND_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & BUILTIN_EXCEPTIONS:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert offenders == []


def test_each_kind_carries_its_exit_status():
    assert (OcgInputError.exit_status, OcgFault.exit_status, OcgInterrupted.exit_status) == (
        2,
        1,
        130,
    )
    assert (Terminated.exit_status, StopRequested.exit_status) == (143, 79)
    assert LockHeld.exit_status == 1 and not issubclass(LockHeld, OcgInputError)
    assert issubclass(ApiError, OcgFault) and issubclass(Terminated, KeyboardInterrupt)


@pytest.mark.parametrize(
    "error",
    [
        OcgInputError("runs/a.yaml: seed", "expected an integer"),
        LockHeld("out/m", "PID 1 holds it"),
    ],
)
def test_a_located_error_crosses_a_process_boundary_whole(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    assert (back.where, back.problem) == (error.where, error.problem)


@pytest.mark.parametrize(
    "error, status, line",
    [
        (OcgInputError("x.jsonl:3", "expected JSON"), 2, "ocg: error: x.jsonl:3: expected JSON"),
        (ApiError("HTTP 401 from the server"), 1, "ocg: error: HTTP 401 from the server"),
        (
            StopRequested("m: stopped before the time limit (stop); the next start resumes"),
            79,
            "ocg: error: m: stopped before the time limit (stop); the next start resumes",
        ),
        (
            Terminated("stopped by signal SIGTERM"),
            143,
            "ocg: error: stopped by signal SIGTERM during `ocg repair`; what was finished is kept",
        ),
        (KeyboardInterrupt(), 130, "ocg: error: interrupted (Ctrl-C) during `ocg repair`"),
    ],
)
def test_the_command_line_exits_with_the_kinds_status(
    monkeypatch, capsys, tmp_path, error, status, line
):
    from ocg.generation.answer_store import repair

    def fail(target):
        raise error

    monkeypatch.setattr(repair, "repair", fail)
    assert main(["repair", str(tmp_path)]) == status
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("ocg: error:") == 1 and "Traceback" not in err


def test_a_busy_lock_exits_1_with_one_error_line(capsys, tmp_path):
    folder = tmp_path / "generations" / "m"
    folder.mkdir(parents=True)
    (folder / "ordered.jsonl").write_text("")
    with exclusive(folder, doing="is writing here"):  # another writer, as far as flock can tell
        status = main(["repair", str(folder)])
    err = capsys.readouterr().err
    assert status == 1, err
    assert err.startswith(f"ocg: error: {folder}: PID ") and "is writing here" in err
    assert err.count("ocg: error:") == 1 and err.count("\n") == 1


def test_a_reader_that_goes_away_is_no_error(tmp_path):
    """`ocg sweep --status | head -3`: the pipe closes before ocg has written all; ocg stops as a
    Unix tool does (SIGPIPE's status, 141), with no `ocg: error: Broken pipe` line."""
    import os
    import subprocess
    import sys

    from ocg.core.paths import PROJECT_ROOT

    proc = subprocess.Popen(
        [sys.executable, "-m", "ocg.cli", "models"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)),
        cwd=tmp_path,
    )
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err
