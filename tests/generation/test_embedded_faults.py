"""Faults around the embedded model's conversion and local weights, through the command line: a
killed conversion's hidden folder is removed by the next one (a link of that name is left, its
target untouched); `ocg convert` (make install) and a truncated .safetensors file give one
`ocg: error:` line, never a traceback."""

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest
import yaml

from ocg.cli import main
from ocg.core.layout import ConvertedModel
from ocg.weights import embedded

NAME = "smollm2-135m-instruct"
MAJOR = int(metadata.version("transformers").split(".")[0])


def _weights(path, cut=0):
    """A small real .safetensors file, `cut` bytes short."""
    import torch
    from safetensors.torch import save_file

    save_file({"w": torch.arange(64, dtype=torch.float32)}, str(path))
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[:-cut])


def test_a_killed_conversions_folder_is_removed_by_the_next(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / f".{NAME}.0123456789ab"  # as make_temp names them
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"x" * 1000)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep").write_text("mine")
    (cache / f".{NAME}.abcdefabcdef").symlink_to(theirs)  # not ocg's: left alone
    other = cache / ".other-model.0123456789ab"  # another model's: not this conversion's
    other.mkdir()

    def convert(name, converted, running, replace=False):  # the conversion, stood in for
        converted.folder.mkdir()
        converted.source.write_text(
            json.dumps({"name": name, "transformers": running, "files": {}})
        )
        return converted.folder

    monkeypatch.setattr(embedded, "_convert", convert)
    assert main(["convert"]) == 0
    assert not stale.exists()
    assert (cache / f".{NAME}.abcdefabcdef").is_symlink() and (
        theirs / "keep"
    ).read_text() == "mine"
    assert other.is_dir()
    assert ConvertedModel.named(NAME, MAJOR).source.is_file()


def test_ocg_convert_with_an_unusable_cache_is_one_line(tmp_path):
    stray = tmp_path / "a-file"
    stray.write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "convert"],
        capture_output=True,
        text=True,
        env=dict(os.environ, OCG_MODEL_CACHE=str(stray / "models")),
        timeout=300,
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1 and err[0].startswith("ocg: error: "), proc.stderr
    assert "OCG_MODEL_CACHE" in err[0] and "Traceback" not in proc.stderr


def test_a_truncated_converted_folder_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    converted = ConvertedModel.named(NAME, MAJOR)
    converted.folder.mkdir()
    converted.source.write_text(
        json.dumps({"name": NAME, "transformers": metadata.version("transformers")})
    )
    _weights(converted.folder / "model.safetensors", cut=10)
    assert main(["convert"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"ocg: error: {converted.folder / 'model.safetensors'}: is truncated ("
    ), err


@pytest.mark.parametrize("cut", [10, 200])
def test_a_truncated_local_model_is_refused_in_one_line(tmp_path, capsys, cut):
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    _weights(folder / "model.safetensors", cut=cut)
    models = tmp_path / "m.yaml"
    models.write_text(yaml.safe_dump({"models": {"local": {"id": str(folder)}}}))
    argv = ["generate", "local", "--models-file", str(models), "--subset-k", "1"]
    assert main([*argv, "--templates", "0", "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model.safetensors is truncated" in err[0], err
    assert str(folder) in err[0]


@pytest.mark.parametrize("checkout", [True, False])
def test_moving_outputs_finds_the_conversion_already_made(tmp_path, monkeypatch, capsys, checkout):
    """OCG_OUTPUTS moved (to scratch, a run file's outputs:) and OCG_MODEL_CACHE unset: `ocg
    convert` finds the folder converted before, in one cache (a checkout's outputs/models, an
    installed wheel's user cache), and converts nothing; no models/ appears under either outputs."""
    import ocg.core.paths as paths

    monkeypatch.delenv("OCG_MODEL_CACHE", raising=False)
    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path / "checkout")
    monkeypatch.setattr(paths, "SOURCE_CHECKOUT", checkout)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    conversions = []

    def convert(name, converted, running, replace=False):  # the conversion, stood in for
        conversions.append(converted.folder)
        converted.folder.mkdir()
        converted.source.write_text(
            json.dumps({"name": name, "transformers": running, "files": {}})
        )
        return converted.folder

    monkeypatch.setattr(embedded, "_convert", convert)
    printed = []
    for where in ("a", "b", "a"):
        (tmp_path / where).mkdir(exist_ok=True)
        monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / where))
        monkeypatch.chdir(tmp_path / where)  # a wheel's outputs follow the working directory too
        assert main(["convert"]) == 0
        printed.append(capsys.readouterr().out)
    cache = (
        tmp_path / "checkout" / "outputs" / "models"
        if checkout
        else tmp_path / "xdg" / "ocg" / "models"
    )
    assert conversions == [ConvertedModel.named(NAME, MAJOR).folder]
    assert conversions[0].parent == cache
    assert "converting" in printed[0]  # said once, when it happened
    assert printed[1:] == [f"embedded model {NAME}: {conversions[0]}\n"] * 2
    assert not (tmp_path / "a" / "models").exists() and not (tmp_path / "b" / "models").exists()
