"""A folder variable that names a file is refused where the command starts, naming the variable;
a file-system error under the converted models' folder names OCG_MODEL_CACHE, not --out."""

import errno
import os
import subprocess
import sys

import pytest

from ocg.cli import _os_error


@pytest.mark.parametrize("variable", ["OCG_MODEL_CACHE", "OCG_OUTPUTS"])
def test_a_folder_variable_naming_a_file_is_refused_naming_it(tmp_path, variable):
    stray = tmp_path / "a-file"
    stray.write_text("x")
    env = dict(os.environ, **{variable: str(stray)})
    proc = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "score", "--generations", str(tmp_path / "g")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and err == [
        f"ocg: error: {variable}: {stray} is a file; expected a folder (or unset {variable})"
    ], proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_os_error_under_the_model_cache_names_its_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "out"))
    inside = OSError(errno.ENOTDIR, "Not a directory", str(tmp_path / "cache" / "m" / "x"))
    message, code = _os_error(inside)
    assert code == 2 and "OCG_MODEL_CACHE" in message and "OCG_OUTPUTS" not in message
    outside = OSError(errno.EACCES, "Permission denied", str(tmp_path / "out" / "x"))
    message, code = _os_error(outside)
    assert "--out or OCG_OUTPUTS" in message and "OCG_MODEL_CACHE" not in message
