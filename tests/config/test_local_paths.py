"""Every local path in a models, run or sweep file is resolved against the file that names it and
checked when the file is read (ocg/config/local_paths.py; docs/sweeps.md, "Where relative paths
point"). Through the real command line, from a working directory that is none of the files'
folders, on generated layouts: nested folders, `..`, spaces."""

import contextlib
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocg.cli import main
from ocg.config.local_paths import looks_local
from ocg.config.model_registry import load_models
from ocg.core.files import read_yaml
from ocg.jobs.run_checks import check_run

SEGMENT = st.text(alphabet="ab z-_", min_size=1, max_size=6).filter(
    lambda s: s.strip() == s and s not in {".", ".."}
)
FOLDERS = st.lists(SEGMENT, min_size=0, max_size=3)


def _model_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    (folder / "model.safetensors").write_bytes(b"")


def _relative(target: Path, start: Path) -> str:
    rel = os.path.relpath(target, start)
    return rel if rel.startswith("..") else f"./{rel}"


def _layout(root: Path, models_at: list[str], model_at: list[str], run_at: list[str]):
    """A models file, a model folder and a run file, each in its own (generated) folder."""
    models_dir = root.joinpath("m", *models_at)
    model_dir = root.joinpath("w", *model_at, "my model")
    run_dir = root.joinpath("r", *run_at)
    for folder in (models_dir, run_dir, root / "elsewhere"):
        folder.mkdir(parents=True, exist_ok=True)
    _model_folder(model_dir)
    models_file = models_dir / "my models.yaml"
    model_id = _relative(model_dir, models_dir)
    models_file.write_text(
        "models:\n"
        f"  mine: {{id: {json.dumps(model_id)}, quantization: none, dtype: float32}}\n"
        "  hub: {id: org/name, quantization: none, dtype: float32}\n"
    )
    run_file = run_dir / "run.yaml"
    run_file.write_text(
        "name: r\n"
        f"models_file: {json.dumps(_relative(models_file, run_dir))}\n"
        "models: [mine]\nconditions: [ordered]\n"
        f"scoring: {{embedding_model: {json.dumps(_relative(models_dir, run_dir))}}}\n"
    )
    return models_file, model_dir, run_file


def _one_error_line(err: str, *parts: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ocg: error: "), err
    for part in parts:
        assert part in lines[0], (part, err)
    return lines[0]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(models_at=FOLDERS, model_at=FOLDERS, run_at=FOLDERS)
def test_a_relative_local_path_is_the_naming_files_and_a_missing_one_fails_at_load(
    capsys, models_at, model_at, run_at
):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        models_file, model_dir, run_file = _layout(root, models_at, model_at, run_at)
        with contextlib.chdir(root / "elsewhere"):  # the working directory is none of theirs
            capsys.readouterr()
            assert main(["models", "--models-file", str(models_file)]) == 0
            assert str(model_dir) in capsys.readouterr().out
            entries = load_models(models_file)
            assert entries["mine"].id == str(model_dir)
            assert entries["hub"].id == "org/name"  # a hub id stays as written
            run = check_run(read_yaml(run_file), run_file)
            assert run.entries["mine"].id == str(model_dir)
            assert run.file.scoring["embedding_model"] == str(models_file.parent)

            # the folder gone: one `ocg: error:` line at load, naming the file and the key
            for name in ("config.json", "model.safetensors"):
                (model_dir / name).unlink()
            model_dir.rmdir()
            assert main(["models", "--models-file", str(models_file)]) == 2
            _one_error_line(capsys.readouterr().err, str(models_file), "models.mine.id")
            assert main(["report", str(run_file)]) == 2  # before any work
            _one_error_line(capsys.readouterr().err, str(models_file), "models.mine.id")
            assert not (root / "elsewhere" / "outputs").exists()


def test_a_missing_scoring_folder_or_models_file_of_a_run_names_the_run_file_and_key(
    tmp_path, capsys
):
    _, model_dir, run_file = _layout(tmp_path, ["a b"], ["c"], ["d", "e"])
    text = run_file.read_text()
    run_file.write_text(text.replace("embedding_model: ", "embedding_model: ../"))
    assert main(["report", str(run_file)]) == 2
    _one_error_line(capsys.readouterr().err, str(run_file), "scoring.embedding_model")
    run_file.write_text(text.replace("models_file: ", "models_file: x"))
    assert main(["report", str(run_file)]) == 2
    _one_error_line(capsys.readouterr().err, str(run_file), "models_file")


@given(st.sampled_from(["org/name", "gpt2-xl", "embedded:smollm2-135m-instruct", "ocg-data:x"]))
def test_a_hub_id_an_embedded_model_and_shipped_data_are_not_local_paths(value):
    assert not looks_local(value, None)


@given(st.sampled_from(["/abs", "./x", "../x", "~/x", "a/b/c", "."]))
def test_what_is_written_as_a_path_is_a_local_path(value):
    assert looks_local(value, None)


def test_a_replay_file_is_the_models_files_and_a_run_asking_a_missing_one_stops_first(
    tmp_path, capsys
):
    """A file of answers may be written after the models file names it: the file loads, and a
    run that asks the entry is refused before any work, naming the models file and key."""
    (tmp_path / "m m").mkdir()
    models_file = tmp_path / "m m" / "models.yaml"
    models_file.write_text(
        "models:\n  r: {backend: replay, id: x/r, replay: {file: ../answers/a b.jsonl}}\n"
    )
    expected = tmp_path / "answers" / "a b.jsonl"
    assert load_models(models_file)["r"].replay.file == str(expected)
    run_file = tmp_path / "run.yaml"
    run_file.write_text(
        'name: r\nmodels_file: "m m/models.yaml"\nmodels: [r]\nconditions: [ordered]\n'
    )
    with contextlib.chdir(tmp_path / "m m"):
        assert main(["report", str(run_file)]) == 2
    _one_error_line(capsys.readouterr().err, str(models_file), "models.r.replay.file")
    assert not (tmp_path / "outputs").exists()
