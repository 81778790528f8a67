"""A built dataset is checked on load: each row's concepts and pos_pattern (what
the forced condition's grammar is built from), then the table against its manifest's hashes, through
the real CLI: exit 2, one `ocg: error:` line naming the file and field, and how to rebuild."""

import json

import pandas as pd
import pytest

from ocg.cli import main


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("ocg: error: ") <= 1, err
    return code, err


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data") / "d"
    assert (
        main(
            [
                "build-data",
                "--subset-k",
                "1",
                "--conditions",
                "ordered_constrained",
                "--out",
                str(folder),
            ]
        )
        == 0
    )
    return folder


def tampered(built, tmp_path, edit):
    """A copy of the dataset with `edit(df)` applied to its table (the manifest left as built)."""
    import shutil

    folder = shutil.copytree(built, tmp_path / "d")
    df = pd.read_parquet(folder / "instances.parquet")
    edit(df)
    df.to_parquet(folder / "instances.parquet", index=False)
    return folder


def generate(capsys, tmp_path, dataset):
    return cli(
        capsys,
        "generate",
        "smollm2-135m-instruct",
        "--conditions",
        "ordered_constrained",
        "--dataset",
        dataset,
        "--out",
        tmp_path / "gen",
    )


def _set(column, row, value):
    def edit(df):
        df.at[row, column] = value

    return edit


@pytest.mark.parametrize(
    "edit, field, what",
    [
        (_set("concepts", 3, []), "concepts", "row 3 (instance 'ordered_constrained-t0-"),
        (
            _set("concepts", 5, ["dog", "", "catch", "throw"]),
            "concepts",
            "expected a non-empty list of lower-case words",
        ),
        (
            _set("pos_pattern", 7, "NN"),
            "pos_pattern",
            "got 'NN'; expected one of N/V per concept (4)",
        ),
        (_set("pos_pattern", 7, ""), "pos_pattern", "got ''; expected one of N/V per concept (4)"),
    ],
)
def test_a_tampered_row_is_named_by_file_and_field(built, tmp_path, capsys, edit, field, what):
    folder = tampered(built, tmp_path, edit)
    code, err = generate(capsys, tmp_path, folder)
    assert (
        code == 2
        and err.startswith(f"ocg: error: {folder / 'instances.parquet'}: {field}: ")
        and what in err
    ), err
    assert not (tmp_path / "gen").exists()


def swap_pos(
    df,
):  # a pattern of the right length and letters, the wrong one: the grammar would inflect wrongly
    df.at[0, "pos_pattern"] = df.at[0, "pos_pattern"].translate(str.maketrans("NV", "VN"))


def edit_prompt(df):
    df.at[2, "messages"] = df.at[2, "messages"].replace("Concepts:", "Words:")


@pytest.mark.parametrize(
    "edit, field", [(edit_prompt, "content_sha256"), (swap_pos, "instances_sha256")]
)
def test_a_table_that_is_not_the_built_one_is_refused(built, tmp_path, capsys, edit, field):
    folder = tampered(built, tmp_path, edit)
    code, err = generate(capsys, tmp_path, folder)
    assert code == 2 and err.startswith(
        f"ocg: error: {folder / 'instances.parquet'}: {field}: the table is not the "
        "one manifest.json records"
    ), err
    assert (
        f"rebuild it with `ocg build-data --n 4 --subset-k 1 --conditions ordered_constrained --out {folder}`"
        in err
    )


def test_the_built_dataset_loads_and_records_its_file_hash(built, tmp_path, capsys):
    from ocg.data import load_dataset

    df, manifest = load_dataset(built)
    assert len(df) == 144 and len(manifest["instances_sha256"]) == 64
    older = json.loads((built / "manifest.json").read_text())
    del older[
        "instances_sha256"
    ]  # a dataset built before the file hash was recorded: the other checks hold
    copy = tampered(built, tmp_path, lambda df: None)
    (copy / "manifest.json").write_text(json.dumps(older))
    assert len(load_dataset(copy)[0]) == 144
