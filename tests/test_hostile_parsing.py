"""Files built to break the readers (second review of issue 32 items 7 and 11), through the real
CLI where one reads them: one `ocg: error:` line naming the file, never a traceback."""

import pytest
from test_hostile import cli


def test_a_held_lock_whose_text_nests_deep_still_names_a_holder(tmp_path):
    """The holder's stamp is read to say who holds the lock: 2,048 brackets fit in what is read."""
    import fcntl
    import os

    from ocg.generation.lock import LockHeld, exclusive
    lock = tmp_path / ".lock"
    lock.write_text("[" * 2048)
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another open file: another holder
    try:
        with pytest.raises(LockHeld, match="another process is writing here"):
            with exclusive(tmp_path):
                pytest.fail("two holders")
    finally:
        os.close(fd)


@pytest.mark.parametrize("text, what", [("not json", "not valid JSON: Expecting value"),
                                        ("[" * 100_000 + "]" * 100_000, "not valid JSON: nested too deeply"),
                                        ("[1, 2]", "not a notebook: expected a JSON object with a list of cells")])
def test_a_notebook_path_that_is_no_notebook_is_named(tmp_path, capsys, text, what):
    path = tmp_path / "mine.ipynb"
    path.write_text(text)
    code, err = cli(capsys, "run-notebook", path, "--out", tmp_path / "out")
    assert code == 2 and err.startswith(f"ocg: error: {path}: {what}"), err



@pytest.mark.parametrize("entry", ["\n  ? [a, b]\n  : {id: a/b}", " {m: {id: a/b, seed: {? {x: 1} : 2}}}"])
def test_a_yaml_key_that_is_a_list_or_mapping_is_named(tmp_path, capsys, entry):
    path = tmp_path / "models.yaml"
    path.write_text("models:" + entry + "\n")
    code, err = cli(capsys, "models", "--models-file", path)
    assert code == 2 and err.startswith(f"ocg: error: {path}: invalid YAML") and "unhashable key" in err, err
