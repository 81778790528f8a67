"""A converted embedded model is read only by the transformers major version that wrote it."""

import json
from importlib import metadata

import pytest

from ocg.core.errors import OcgInputError
from ocg.core.layout import ConvertedModel
from ocg.weights.embedded import convert_all, ensure_converted

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

NAME = "smollm2-135m-instruct"
RUNNING = metadata.version("transformers")
MAJOR = int(RUNNING.split(".")[0])


def test_each_major_version_has_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    assert (
        ConvertedModel.named(NAME, 4).folder == tmp_path / NAME
    )  # where 4.x conversions always were
    assert ConvertedModel.named(NAME, 5).folder == tmp_path / f"{NAME}.transformers5"


@pytest.mark.parametrize("written", ["4.57.6", "5.23.0", "6.0.0"])
def test_a_record_of_another_major_version_is_refused(tmp_path, monkeypatch, written):
    """A 5.x folder read by 4.57 silently runs with rope_theta 10000 instead of 100000: never read."""
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    converted = ConvertedModel.named(NAME, MAJOR)
    converted.folder.mkdir()
    converted.source.write_text(json.dumps({"name": NAME, "transformers": written, "files": {}}))
    if written.split(".")[0] == str(MAJOR):
        assert ensure_converted(NAME) == converted.folder  # the same major: read as it is
        return
    with pytest.raises(OcgInputError) as err:
        ensure_converted(NAME)
    message = str(err.value)
    assert str(converted.source) in message and f"converted by transformers {written}" in message
    assert f"this is transformers {RUNNING}" in message and f"delete {converted.folder}" in message


def test_a_record_without_a_version_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    converted = ConvertedModel.named(NAME, MAJOR)
    converted.folder.mkdir()
    converted.source.write_text(json.dumps({"name": NAME}))
    with pytest.raises(OcgInputError, match="records no readable transformers version"):
        ensure_converted(NAME)


def test_install_step_names_each_converted_folder_and_stops_on_a_foreign_one(
    tmp_path, monkeypatch, capsys
):
    """`make install` runs convert_all: a folder already converted by this major is named, not
    rewritten; one of another major stops the install with the error the demo would give."""
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    converted = ConvertedModel.named(NAME, MAJOR)
    converted.folder.mkdir()
    converted.source.write_text(json.dumps({"name": NAME, "transformers": RUNNING, "files": {}}))
    convert_all()
    assert capsys.readouterr().out == f"embedded model {NAME}: {converted.folder}\n"
    assert sorted(p.name for p in converted.folder.iterdir()) == [converted.source.name]
    converted.source.write_text(json.dumps({"name": NAME, "transformers": f"{MAJOR + 1}.0.0"}))
    with pytest.raises(OcgInputError, match="converted by transformers"):
        convert_all()
