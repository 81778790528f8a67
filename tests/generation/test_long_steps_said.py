"""No silent stretch in the terminal: a step that can take minutes under load (the model's load,
the embedded model's conversion, the CUDA warm-up) says when it starts and when it ends, with its
seconds (ocg/core/progress.py, stage)."""

import re
import types

import pytest

from ocg.config.model_registry import get_model
from ocg.core.progress import stage

SECONDS = r"done in \d+\.\d s"


def _lines(capsys) -> list[str]:
    captured = capsys.readouterr()
    return (captured.out + captured.err).splitlines()


def test_a_stage_says_its_start_and_its_end_with_seconds_and_no_end_when_it_fails(capsys):
    with stage("m: loading"):
        pass
    start, end = _lines(capsys)
    assert start == "m: loading ..." and re.fullmatch(rf"m: loading: {SECONDS}", end)
    with pytest.raises(RuntimeError), stage("m: converting"):
        raise RuntimeError("broken")
    assert _lines(capsys) == ["m: converting ..."]  # the error says the rest, not "done"


def test_the_embedded_models_conversion_is_said(tmp_path, monkeypatch, capsys):
    from ocg.weights import embedded

    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))  # nothing converted here yet
    monkeypatch.setattr(
        embedded, "_convert", lambda name, converted, running, replace: converted.folder
    )
    folder = embedded.ensure_converted("smollm2-135m-instruct")
    start, end = _lines(capsys)
    assert start.startswith("embedded model smollm2-135m-instruct: converting") and start.endswith(
        "..."
    )
    assert str(folder.parent) in start
    assert re.search(SECONDS + "$", end) and end.startswith(start.removesuffix(" ..."))


def test_the_model_load_and_the_cuda_warm_up_are_said(monkeypatch, capsys):
    from ocg.generation.backends import transformers_backend as tb

    model = types.SimpleNamespace(generation_config=None)
    monkeypatch.setattr(tb, "load_weights", lambda *a: model)
    monkeypatch.setattr(tb, "warm_up", lambda *a: None)
    monkeypatch.setattr(
        tb.TransformersBackend,
        "_generation_config",
        lambda self: types.SimpleNamespace(eos_token_id=2),
    )
    backend = tb.TransformersBackend(get_model("smollm2-135m-instruct"), device="cuda")
    capsys.readouterr()
    backend._load_model()
    lines = _lines(capsys)
    assert lines[0] == "smollm2-135m-instruct: loading the model (none, float32) on cuda ..."
    assert re.fullmatch(r"smollm2-135m-instruct: loading the model .*: " + SECONDS, lines[1])
    assert lines[2] == "smollm2-135m-instruct: warming up on CUDA (two tokens, once) ..."
    assert re.fullmatch(r"smollm2-135m-instruct: warming up on CUDA .*: " + SECONDS, lines[3])
    assert len(lines) == 4
