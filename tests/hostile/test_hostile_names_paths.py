"""Names a table would read back as values, and paths that are not where they seem, through the real CLI: exit 2 and one `ocg: error:` line naming the field."""

import os
import subprocess
import sys

import pytest
import yaml

from tests.helpers import write_generations

VALUE_NAMES = ["nan", "NA", "null", "None", "007", "1.10", "True", "1e5", "inf"]


def ocg(*args, env=None, cwd=None):
    result = subprocess.run(
        [sys.executable, "-m", "ocg.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env or os.environ.copy(),
        timeout=300,
        cwd=cwd,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize("name", VALUE_NAMES)
def test_a_model_named_like_a_value_is_refused(tmp_path, name):
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {name: {"backend": "replay", "id": "x/y"}}}))
    result = ocg("models", "--models-file", path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(
        f"ocg: error: {path}: models.{name}: got '{name}'; a name must not read "
        "as a number or a missing value"
    ), result.stderr
    assert result.stderr.count("ocg: error:") == 1


def test_a_generations_folder_named_like_a_value_is_refused_before_scoring(tmp_path):
    for model in ("m", "NA"):
        write_generations(
            tmp_path / "gen",
            model,
            [
                {
                    "set_id": "s",
                    "template_id": 0,
                    "perm_index": 0,
                    "concepts": ["dog", "run"],
                    "answer": "A dog runs.",
                }
            ],
        )
    result = ocg(
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
    )
    assert (
        result.returncode == 2
        and f"ocg: error: {tmp_path / 'gen' / 'NA'}: got 'NA'" in result.stderr
    ), result.stderr
    assert not (tmp_path / "scores").exists()


def test_names_that_read_back_as_written_are_kept():
    from ocg.core.names import check_name

    for name in ("gpt2", "m-007", "llama-3.1-8b", "nano", "v1.10a", "none-such", "e5"):
        assert check_name("x", name) == name


def replay_setup(folder):
    """A models file in `folder` whose replay entry names its answers file relatively."""
    from ocg.generation import select_instances

    rows = select_instances(None, ["ordered"], 1, [0])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answers.jsonl").write_text(
        "".join(f'{{"instance_id": "{i}", "answer": "A dog runs."}}\n' for i in rows.instance_id)
    )
    (folder / "models.yaml").write_text(
        "models:\n  m: {id: x/z, backend: replay, replay: {file: answers.jsonl}}\n"
    )
    return [
        "--models-file",
        folder / "models.yaml",
        "--subset-k",
        1,
        "--templates",
        0,
        "--conditions",
        "ordered",
    ]


def test_a_relative_replay_file_is_beside_its_models_file(tmp_path):
    args = replay_setup(tmp_path / "mine")
    (tmp_path / "elsewhere").mkdir()
    result = ocg("generate", "m", "--out", tmp_path / "gen", *args, cwd=tmp_path / "elsewhere")
    assert result.returncode == 0, result.stderr
    assert "24 of 24 asked instances" in result.stdout + result.stderr


def test_a_home_folder_in_ocg_outputs_is_expanded(tmp_path):
    args = replay_setup(tmp_path / "mine")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "OCG_OUTPUTS": "~/scratch"}
    result = ocg("generate", "m", *args, env=env, cwd=work)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "home" / "scratch" / "generations" / "m" / "ordered.jsonl").exists()
    assert not (work / "~").exists() and not (tmp_path / "mine" / "~").exists()


def test_a_long_chain_of_extends_is_refused_with_a_limit(tmp_path):
    def chain(n):
        for i in range(n):
            (tmp_path / f"f{i}.yaml").write_text(
                f"extends: f{i + 1}.yaml\nmodels:\n  m{i}: {{id: x/{i}}}\n"
            )
        (tmp_path / f"f{n}.yaml").write_text("models:\n  last: {id: x/last}\n")

    chain(1500)
    result = ocg("models", "--models-file", tmp_path / "f0.yaml")
    assert result.returncode == 2 and result.stderr.count("ocg: error:") == 1, result.stderr[-2000:]
    assert (
        f"{tmp_path / 'f49.yaml'}: extends: more than 50 models files in one chain" in result.stderr
    )
    chain(30)
    result = ocg("models", "--models-file", tmp_path / "f0.yaml")
    assert result.returncode == 0 and "m29" in result.stdout and "last" in result.stdout, (
        result.stderr
    )


def test_a_folder_named_like_a_value_does_not_block_the_others(tmp_path):
    for model in ("m", "NA"):
        write_generations(
            tmp_path / "gen",
            model,
            [
                {
                    "set_id": "s",
                    "template_id": 0,
                    "perm_index": 0,
                    "concepts": ["dog", "run"],
                    "answer": "A dog runs.",
                }
            ],
        )
    result = ocg(
        "score",
        "--generations",
        tmp_path / "gen",
        "--out",
        tmp_path / "scores",
        "--metrics",
        "distinct",
        "--models",
        "m",
    )
    assert result.returncode == 0, result.stderr
