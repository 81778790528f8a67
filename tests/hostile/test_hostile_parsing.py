"""Files built to break the readers, through the
real CLI where one reads them: one `ocg: error:` line naming the file, never a traceback."""

import pytest

from tests.hostile.cases import cli


def test_a_held_lock_whose_text_nests_deep_still_names_a_holder(tmp_path):
    """The holder's stamp is read to say who holds the lock: 2,048 brackets fit in what is read."""
    import fcntl
    import os

    from ocg.core.lock import LockHeld, exclusive

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


@pytest.mark.parametrize(
    "text, what",
    [
        ("not json", "not valid JSON: Expecting value"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON: nested too deeply"),
        ("[1, 2]", "not a notebook: expected a JSON object with a list of cells"),
    ],
)
def test_a_notebook_path_that_is_no_notebook_is_named(tmp_path, capsys, text, what):
    path = tmp_path / "mine.ipynb"
    path.write_text(text)
    code, err = cli(capsys, "run-notebook", path, "--out", tmp_path / "out")
    assert code == 2 and err.startswith(f"ocg: error: {path}: {what}"), err


@pytest.mark.parametrize(
    "entry", ["\n  ? [a, b]\n  : {id: a/b}", " {m: {id: a/b, seed: {? {x: 1} : 2}}}"]
)
def test_a_yaml_key_that_is_a_list_or_mapping_is_named(tmp_path, capsys, entry):
    path = tmp_path / "models.yaml"
    path.write_text("models:" + entry + "\n")
    code, err = cli(capsys, "models", "--models-file", path)
    assert (
        code == 2
        and err.startswith(f"ocg: error: {path}: invalid YAML")
        and "unhashable key" in err
    ), err


def test_a_score_set_lacking_a_documented_column_says_how_to_recompute_it(tmp_path):
    """A set scored before a column existed is refused on read: the error says what to run."""

    from ocg.cli import main
    from ocg.core.errors import OcgInputError
    from ocg.results.scores import load_scores
    from tests.helpers import write_generations
    from tests.hostile.cases import reseal

    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": 0,
            "concepts": ["dog", "run"],
            "answer": "A dog runs.",
        }
    ]
    write_generations(tmp_path / "gen", "m", rows)
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "scores"),
                "--metrics",
                "distinct",
            ]
        )
        == 0
    )
    path = reseal(tmp_path / "scores" / "m", "summary", lambda f: f.drop(columns=["n_no_letters"]))
    with pytest.raises(
        OcgInputError, match=r"column\(s\) n_no_letters missing .* run `ocg score --redo`"
    ):
        load_scores(tmp_path / "scores")
    assert (
        main(
            [
                "score",
                "--generations",
                str(tmp_path / "gen"),
                "--out",
                str(tmp_path / "scores"),
                "--metrics",
                "distinct",
                "--redo",
            ]
        )
        == 0
    )
    assert "n_no_letters" in load_scores(tmp_path / "scores").summary
    assert path.exists()  # recomputed in place


def test_a_run_card_in_utf16_is_named_not_read(tmp_path, capsys):
    """JSON files are UTF-8 (a BOM skipped); json's own guess would read UTF-16 as if it were."""
    from ocg.cli import main
    from tests.hostile.cases import replay_run

    args = ["generate", "m", "--out", tmp_path / "gen", *replay_run(tmp_path)]
    assert main([str(a) for a in args]) == 0
    card = tmp_path / "gen" / "m" / "run_card.json"
    card.write_bytes(card.read_text().encode("utf-16"))
    capsys.readouterr()
    code, err = cli(capsys, *args)
    assert code == 2 and err.startswith(f"ocg: error: {card}: not UTF-8 text: byte 0"), err
