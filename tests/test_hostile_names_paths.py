"""Names a table would read back as values, and paths that are not where they seem (issue 45,
items 8 and 16), through the real CLI: exit 2 and one `ocg: error:` line naming the field."""

import os
import subprocess
import sys

import pytest
import yaml
from helpers import write_generations

VALUE_NAMES = ["nan", "NA", "null", "None", "007", "1.10", "True", "1e5", "inf"]


def ocg(*args, env=None, cwd=None):
    result = subprocess.run([sys.executable, "-m", "ocg.cli", *map(str, args)], capture_output=True, text=True,
                            env=env or os.environ.copy(), timeout=300, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize("name", VALUE_NAMES)
def test_a_model_named_like_a_value_is_refused(tmp_path, name):
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {name: {"backend": "replay", "id": "x/y"}}}))
    result = ocg("models", "--models-file", path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"ocg: error: {path}: models.{name}: got '{name}'; a name must not read "
                                    "as a number or a missing value"), result.stderr
    assert result.stderr.count("ocg: error:") == 1


def test_a_generations_folder_named_like_a_value_is_refused_before_scoring(tmp_path):
    for model in ("m", "NA"):
        write_generations(tmp_path / "gen", model, [{"set_id": "s", "template_id": 0, "perm_index": 0,
                                                     "concepts": ["dog", "run"], "answer": "A dog runs."}])
    result = ocg("score", "--generations", tmp_path / "gen", "--out", tmp_path / "scores", "--metrics", "distinct")
    assert result.returncode == 2 and f"ocg: error: {tmp_path / 'gen' / 'NA'}: got 'NA'" in result.stderr, result.stderr
    assert not (tmp_path / "scores").exists()


def test_names_that_read_back_as_written_are_kept():
    from ocg.names import check_name
    for name in ("gpt2", "m-007", "llama-3.1-8b", "nano", "v1.10a", "none-such", "e5"):
        assert check_name("x", name) == name
