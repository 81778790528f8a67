"""A judge that cannot load costs only its verdicts. A local judge folder that is
missing, empty or not a model is refused when the run file (or the scoring settings) is read,
through generation's own check of local model folders (transformers_loading.check_model_folder):
exit 2, one line naming the entry and the folder, nothing written. A judge that passes that check
but fails to load (a truncated safetensors, a server that exits, any exception) or fails while
decoding leaves every wanted answer unjudged with the error, uncached: every other family is
written, the judge's is missing with the reason, and scoring ends with JudgeFailed."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocg.config.model_registry import load_models
from ocg.core.errors import OcgInputError
from ocg.core.paths import PARAMS_DIR, PROJECT_ROOT
from ocg.generation.backends.transformers_loading import resolve_source
from ocg.jobs.run_checks import check_run
from ocg.scoring import score_model
from ocg.scoring.judging import JudgeFailed
from tests.helpers import scoring_with, write_generations

CONCEPTS = ["dog", "catch", "frisbee", "park"]
ANSWERS = [
    "The dog jumps to catch a frisbee in the park.",
    "In the park, a frisbee is caught by the dog.",
    "dog catch frisbee park",
    "",
]


def _broken(kind: str, folder):
    """A judge folder that is no model, and what the refusal says of it."""
    if kind == "missing":
        return "does not exist"
    if kind == "a file":
        folder.write_text("weights?")
        return "is not a directory"
    folder.mkdir()
    if kind == "empty":
        return "holds no model (it is empty)"
    (folder / "tokenizer.json").write_text("{}")
    if kind == "no config.json":
        (folder / "model.safetensors").write_bytes(b"\0" * 16)
        return "holds no model (no config.json)"
    if kind == "config.json a folder":
        (folder / "config.json").mkdir()
        return "holds no model (no config.json)"
    if kind == "no weights":
        (folder / "config.json").write_text('{"model_type": "llama"}')
        return "holds no model (no weights: no *.safetensors or *.bin file)"
    junk = {
        "junk config.json": (b"not json{", "its config.json is not JSON"),
        "binary config.json": (b"\xff\xfe\x00\x81\x00", "its config.json is not JSON"),
        "config.json a list": (b"[1, 2]", "its config.json is not a JSON mapping"),
        "config.json null": (b"null", "its config.json is not a JSON mapping"),
    }[kind]
    (folder / "config.json").write_bytes(junk[0])
    (folder / "model.safetensors").write_bytes(b"\0" * 16)
    return f"holds no model ({junk[1]}"


KINDS = [
    "missing",
    "a file",
    "empty",
    "no config.json",
    "config.json a folder",
    "no weights",
    "junk config.json",
    "binary config.json",
    "config.json a list",
    "config.json null",
]


def _models_file(tmp_path, judge: dict) -> str:
    path = tmp_path / "models.yaml"
    models = {"gen": {"backend": "replay", "id": "x/gen"}, "the-judge": judge}
    path.write_text(yaml.safe_dump({"extends": str(PARAMS_DIR / "models.yaml"), "models": models}))
    return str(path)


def _local_judge(folder) -> dict:
    return {"backend": "transformers", "id": str(folder), "quantization": "none", "batch_size": 4}


def _run_file(tmp_path, judge: dict):
    _models_file(tmp_path, judge)
    run = {
        "name": "r",
        "models_file": "models.yaml",
        "models": ["gen"],
        "conditions": ["ordered"],
        "outputs": "judge-run",  # under OCG_OUTPUTS: nothing may be written there
        "scoring": {"judge": "the-judge"},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run))
    return path


# A judge folder that is not there at all (or a file) is refused where its models file is read,
# naming that file and the entry's id (ocg/config/local_paths.py); one that is there but holds
# no model, where the run's checks load it, naming the run's scoring.judge
AT_LOAD = ("missing", "a file")


def _where(kind: str, path, tmp_path) -> str:
    if kind in AT_LOAD:
        return f"{tmp_path / 'models.yaml'}: models.the-judge.id"
    return f"{path}: scoring.judge"


def _one_line_naming(message: str, *names) -> None:
    assert "\n" not in message.strip(), message
    for name in names:
        assert str(name) in message, (name, message)


@pytest.mark.parametrize("kind", KINDS)
def test_a_judge_folder_that_is_no_model_is_refused_when_the_run_file_is_read(tmp_path, kind):
    folder = tmp_path / "judge-weights"
    said = _broken(kind, folder)
    path = _run_file(tmp_path, _local_judge(folder))
    with pytest.raises(OcgInputError) as caught:
        check_run(yaml.safe_load(path.read_text()), path)
    assert caught.value.where == _where(kind, path, tmp_path)
    _one_line_naming(str(caught.value), "the-judge", "models.the-judge.id", folder, said)


NAMES = ["tokenizer.json", "generation_config.json", "README.md", "model.safetensors"]
NAMES += ["model-00002-of-00002.safetensors", "pytorch_model.bin", "model.gguf", "config.json"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


# A safetensors file holding no tensor, whole: its header's length, then the header `{}`
WHOLE_SAFETENSORS = struct.pack("<Q", 2) + b"{}"


@st.composite
def folders(draw):
    """A judge folder as found on disk: missing, a file, or a folder of some of NAMES, its
    config.json junk bytes, JSON of any shape, or a folder itself; each .safetensors whole or
    junk."""
    shape = draw(st.sampled_from(["missing", "a file", "folder"]))
    files = {}
    if shape == "folder":
        for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=len(NAMES))):
            whole = name.endswith(".safetensors") and draw(st.booleans())
            files[name] = WHOLE_SAFETENSORS if whole else b"\0" * 8
        if "config.json" in files:
            files["config.json"] = draw(
                st.binary(max_size=20)
                | JSON.map(lambda v: json.dumps(v).encode())
                | st.just(None)  # config.json a folder
            )
    return shape, files


def _is_a_model(shape: str, files: dict) -> bool:
    """The rule the check holds a folder to: a config.json file that reads as a JSON mapping, and
    weights (*.safetensors or *.bin) beside it, every .safetensors whole (a header and the bytes
    it names)."""
    if shape != "folder" or files.get("config.json") is None:
        return False
    try:
        config = json.loads(files["config.json"])
    except ValueError:
        return False
    weights = any(n.endswith((".safetensors", ".bin")) for n in files)
    whole = all(d == WHOLE_SAFETENSORS for n, d in files.items() if n.endswith(".safetensors"))
    return isinstance(config, dict) and weights and whole


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(found=folders())
def test_a_judge_folder_passes_the_run_checks_exactly_when_it_holds_a_model(found):
    shape, files = found
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "judge weights"
        if shape == "a file":
            folder.write_text("weights?")
        elif shape == "folder":
            folder.mkdir()
            for name, data in files.items():
                (folder / name).mkdir() if data is None else (folder / name).write_bytes(data)
        path = _run_file(Path(tmp), _local_judge(folder))
        if _is_a_model(shape, files):
            assert check_run(yaml.safe_load(path.read_text()), path).scoring.judge == "the-judge"
            return
        with pytest.raises(OcgInputError) as caught:
            check_run(yaml.safe_load(path.read_text()), path)
    assert caught.value.where == _where(shape, path, Path(tmp))
    _one_line_naming(str(caught.value), "the-judge", "models.the-judge.id", folder)


@pytest.mark.parametrize("kind", ["missing", "empty", "junk config.json"])
def test_ocg_report_refuses_it_with_exit_2_one_line_and_nothing_written(tmp_path, outputs, kind):
    folder = tmp_path / "judge-weights"
    said = _broken(kind, folder)
    path = _run_file(tmp_path, _local_judge(folder))
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "OCG_OUTPUTS": str(outputs)}
    done = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "report", str(path)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"ocg: error: {_where(kind, path, tmp_path)}: "), done.stderr
    _one_line_naming(done.stderr, "the-judge", folder, said)
    assert not outputs.exists() or not any(outputs.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "judge-weights") == [
        "models.yaml",
        "run.yaml",
    ]


def test_a_folder_with_a_config_and_weights_passes_as_does_an_embedded_judge(tmp_path):
    folder = tmp_path / "judge-weights"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model-00001-of-00002.safetensors").write_bytes(WHOLE_SAFETENSORS)  # header read only
    path = _run_file(tmp_path, _local_judge(folder))
    assert check_run(yaml.safe_load(path.read_text()), path).scoring.judge == "the-judge"
    shipped = PARAMS_DIR / "runs" / "judge.yaml"  # embedded: converted on demand, not checked
    assert check_run(yaml.safe_load(shipped.read_text()), shipped).scoring.judge


def _served(model_id: str, model_dir=None) -> dict:
    server = {"command": f"{sys.executable} -c pass {{id}}", "startup_timeout_s": 30}
    return {
        "backend": "openai",
        "id": model_id,
        "api": {
            "base_url": "http://127.0.0.1:{port}/v1",
            "server": {**server, **({"model_dir": str(model_dir)} if model_dir else {})},
        },
    }


def test_a_served_judge_s_local_folder_is_checked_as_well(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for entry, field in [
        (_served(str(empty)), "models.the-judge.id"),
        (_served("x/judge", model_dir=empty), "models.the-judge.api.server.model_dir"),
    ]:
        path = _run_file(tmp_path, entry)
        with pytest.raises(OcgInputError) as caught:
            check_run(yaml.safe_load(path.read_text()), path)
        _one_line_naming(str(caught.value), "the-judge", field, empty, "it is empty")
    gguf = tmp_path / "judge.gguf"  # a single file is the server's business (llama.cpp)
    gguf.write_bytes(b"GGUF")
    path = _run_file(tmp_path, _served("x/judge", model_dir=gguf))
    check_run(yaml.safe_load(path.read_text()), path)


def test_a_generation_model_goes_through_the_same_check(tmp_path):
    folder = tmp_path / "weights"
    said = _broken("no weights", folder)
    spec = load_models(_models_file(tmp_path, _local_judge(folder)))["the-judge"]
    with pytest.raises(OcgInputError, match="holds no model") as caught:
        resolve_source(spec)
    _one_line_naming(str(caught.value), "models.the-judge.id", folder, said)


def _generations(tmp_path):
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": CONCEPTS, "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    return write_generations(tmp_path / "gen", "m", rows)


def _score(tmp_path, models_file):
    return score_model(
        tmp_path / "gen" / "m",
        metrics=["coverage", "judge"],
        out_dir=tmp_path / "scores",
        progress=False,
        scoring=scoring_with(judge="the-judge", judge_models_file=models_file),
    )


@pytest.mark.parametrize("kind", ["missing", "empty", "no weights"])
def test_scoring_refuses_a_judge_folder_that_is_no_model_before_any_work(tmp_path, kind):
    folder = tmp_path / "judge-weights"
    said = _broken(kind, folder)
    _generations(tmp_path)
    with pytest.raises(OcgInputError) as caught:
        _score(tmp_path, _models_file(tmp_path, _local_judge(folder)))
    key = "models.the-judge.id" if kind in AT_LOAD else "scoring.judge"
    _one_line_naming(str(caught.value), key, "the-judge", folder, said)
    assert not (tmp_path / "scores").exists()


def _judge_missing(out, reason_starts: str, error: str) -> dict:
    """Every other family written, the judge's missing with `error`, nothing cached."""
    answers = pd.read_parquet(out / "answers.parquet").set_index("perm_index")
    assert answers["all_present"].notna().all() and answers["in_order"].notna().all()
    assert answers.loc[0, "all_present"] and answers.loc[3, "judge_reason"] == "empty answer"
    asked = answers.loc[[0, 1, 2]]
    assert asked["judge_score"].isna().all() and asked["judge_in_order"].isna().all()
    assert asked["judge_reason"].str.startswith(f"error: {reason_starts}").all()
    assert asked["judge_reason"].str.contains(error, regex=False).all()
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["status"] == "missing" and block["retry"] is True and block["n_errors"] == 3
    assert "the-judge" in block["reason"] and error in block["reason"]
    assert block["load_error" if "load" in reason_starts else "errors"]
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary["judge_score"].isna().all() and summary["judge_missing_reason"].notna().all()
    cache = out / "judge_cache.parquet"
    assert not cache.exists() or pd.read_parquet(cache).empty
    return block


def test_a_judge_whose_server_exits_costs_only_its_verdicts(tmp_path, capsys):
    _generations(tmp_path)
    entry = _served("x/judge")
    entry["api"]["server"]["command"] = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    models = _models_file(tmp_path, entry)
    with pytest.raises(JudgeFailed, match="could not load: ServerError: the server exited"):
        _score(tmp_path, models)
    _judge_missing(tmp_path / "scores" / "m", "judge could not load", "exited with status 3")

    from ocg.cli import main  # the command line: exit 1, one line, no traceback

    settings = yaml.safe_load((PARAMS_DIR / "scoring.yaml").read_text())
    settings.update(judge="the-judge", judge_models_file=models)
    (tmp_path / "scoring.yaml").write_text(yaml.safe_dump(settings))
    capsys.readouterr()
    argv = ["score", "--generations", str(tmp_path / "gen"), "--out", str(tmp_path / "scores")]
    argv += ["--scoring-file", str(tmp_path / "scoring.yaml"), "--metrics", "coverage", "judge"]
    assert main([*argv, "--redo"]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ocg: error: ")]
    assert len(errors) == 1 and "could not load" in errors[0] and "Traceback" not in err, err


class _Backend:
    """A stand-in for TransformersBackend: how it fails is the test's."""

    fails_on = "load"

    def __init__(self, spec, grammars):
        if self.fails_on == "init":
            raise OSError("Can't load tokenizer for '/x': no tokenizer.json")
        self.grammars = grammars

    def _load_model(self):
        if self.fails_on == "load":
            raise RuntimeError("Error(s) in loading state_dict:\n  size mismatch for lm_head")

    def render(self, messages):
        return messages[-1]["content"]

    def generate(self, prompts, instance_ids):
        raise RuntimeError("CUDA error: device-side assert triggered\nCompile with TORCH_USE_DSA")


@pytest.mark.parametrize(
    ("fails_on", "reason", "error"),
    [
        ("init", "judge could not load", "OSError: Can't load tokenizer"),
        ("load", "judge could not load", "RuntimeError: Error(s) in loading state_dict:"),
        ("generate", "judge failed", "RuntimeError: CUDA error: device-side assert triggered"),
    ],
)
def test_an_in_process_judge_that_raises_costs_only_its_verdicts(
    tmp_path, monkeypatch, fails_on, reason, error
):
    monkeypatch.setattr(_Backend, "fails_on", fails_on)
    monkeypatch.setattr(
        "ocg.generation.backends.transformers_backend.TransformersBackend", _Backend
    )
    _generations(tmp_path)
    entry = {"backend": "transformers", "id": "x/judge", "quantization": "none"}
    with pytest.raises(JudgeFailed, match="the judge the-judge answered none") as caught:
        _score(tmp_path, _models_file(tmp_path, entry))
    assert "\n" not in str(caught.value) and error in str(caught.value)
    block = _judge_missing(tmp_path / "scores" / "m", reason, error)
    assert "TORCH_USE_DSA" not in json.dumps(block)  # one line of the error, not its tail


def _broken_judge(tmp_path, how: str):
    """The embedded model's converted folder with its safetensors `truncated` to its first
    megabyte (refused when the run file is read: the header names more bytes), or `mistyped`: whole,
    but one tensor's dtype in the header a word safetensors does not know (it passes the check,
    which reads the header's sizes only, and fails to load)."""
    from ocg.weights.embedded import ensure_converted

    source = ensure_converted("smollm2-135m-instruct")
    folder = tmp_path / f"{how}-judge"
    folder.mkdir()
    for path in source.iterdir():
        if path.name != "model.safetensors":
            shutil.copy(path, folder / path.name)
    data = (source / "model.safetensors").read_bytes()
    if how == "truncated":
        data = data[: 2**20]
    else:
        (n,) = struct.unpack("<Q", data[:8])
        header = data[8 : 8 + n]
        unknown = {b'"dtype":"F32"': b'"dtype":"X32"', b'"dtype":"BF16"': b'"dtype":"XF16"'}
        word = next(w for w in unknown if w in header)
        header = header.replace(word, unknown[word], 1)  # as long: the sizes still hold
        assert len(header) == n
        data = data[:8] + header + data[8 + n :]
    (folder / "model.safetensors").write_bytes(data)
    return source, folder


@pytest.mark.slow
def test_a_judge_whose_weights_cannot_load_costs_only_its_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _, cut = _broken_judge(tmp_path, "truncated")
    path = _run_file(tmp_path, _local_judge(cut))
    with pytest.raises(OcgInputError, match="model.safetensors is truncated"):
        check_run(yaml.safe_load(path.read_text()), path)  # seen from its header, before any work
    source, folder = _broken_judge(tmp_path, "mistyped")
    entry = {**_local_judge(folder), "dtype": "float32", "max_new_tokens": 64}
    models = _models_file(tmp_path, entry)
    path = _run_file(tmp_path, entry)
    check_run(yaml.safe_load(path.read_text()), path)  # the cheap check passes it
    _generations(tmp_path)
    with pytest.raises(JudgeFailed, match="judge could not load: SafetensorError") as caught:
        _score(tmp_path, models)
    assert "every other family was written" in str(caught.value)
    block = _judge_missing(tmp_path / "scores" / "m", "judge could not load", "SafetensorError")
    assert "decoded" not in block
    (folder / "model.safetensors").unlink()  # mended: the next scoring asks the judge again
    (folder / "model.safetensors").symlink_to(source / "model.safetensors")
    out = _score(tmp_path, models)
    answers = pd.read_parquet(out / "answers.parquet").set_index("perm_index")
    assert answers.loc[[0, 1, 2], "judge_reason"].isna().all()
    assert answers.loc[[0, 1, 2], "judge_score"].between(1, 5).all()
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["status"] == "ok" and "retry" not in block and "load_error" not in block
