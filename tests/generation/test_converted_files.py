"""A converted embedded model is read only as its conversion wrote it: the conversion records each
file's digest, every use checks them, and a file changed, added or removed since (an edited
config.json's rope_theta moves every perplexity) is one `ocg: error:` line naming the file and
`ocg convert --again`, which converts anew and replaces the folder. The GGUF loaders are stood in
for by a tiny model and tokenizer (seconds, not the real model's 20 s); the rest is the real
conversion and the real command."""

import json
import os
import shutil
from importlib import metadata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocg.cli import main
from ocg.core.layout import ConvertedModel
from ocg.weights import embedded

NAME = "smollm2-135m-instruct"
MAJOR = int(metadata.version("transformers").split(".")[0])


def _tiny_loaders(monkeypatch):
    """The GGUF read replaced by a one-layer tiny Llama and a word-level tokenizer."""
    import transformers
    from tokenizers import Tokenizer, models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<|im_end|>": 1, "dog": 2, "runs": 3}

    def tokenizer(*args, **kwargs):
        return PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")),
            unk_token="<unk>",
        )

    def model(*args, **kwargs):
        import torch

        torch.manual_seed(0)  # the same weights each time, as the GGUF's are
        config = LlamaConfig(
            vocab_size=len(vocab),
            hidden_size=8,
            intermediate_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
        return LlamaForCausalLM(config)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model)


@pytest.fixture
def converted(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    _tiny_loaders(monkeypatch)
    assert main(["convert"]) == 0
    return ConvertedModel.named(NAME, MAJOR)


def _refused(capsys, *argv):
    capsys.readouterr()
    code = main(["convert", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    return err[0]


def test_the_conversion_records_every_file_it_wrote(converted):
    recorded = json.loads(converted.source.read_text())["files"]
    on_disk = sorted(
        p.name
        for p in converted.folder.iterdir()
        if p != converted.source and not p.name.startswith(".")
    )
    assert sorted(recorded) == on_disk and "config.json" in on_disk
    assert "model.safetensors" in on_disk
    assert all(len(entry["sha256"]) == 64 for entry in recorded.values())


def test_an_edited_config_is_refused_and_converted_again(converted, capsys):
    config = converted.folder / "config.json"
    original = config.read_bytes()
    doc = json.loads(original)
    doc["rope_theta"] = 10000.0
    config.write_text(json.dumps(doc))
    line = _refused(capsys)
    assert line.startswith(f"ocg: error: {config}: changed since its conversion")
    assert "ocg convert --again" in line
    assert main(["convert", "--again"]) == 0
    assert config.read_bytes() == original  # the conversion's own, again
    assert main(["convert"]) == 0
    left = [p.name for p in converted.folder.parent.iterdir() if p.name.startswith(f".{NAME}.")]
    assert left == [f".{NAME}.lock"]  # the replaced folder is gone, not kept hidden beside


def test_two_conversions_of_the_same_bytes_have_the_same_record_and_digest(converted):
    """The record (in the folder's digest, the perplexity signature's revision) holds no mtime:
    converting again changes neither; the stat of the weights lives in a hidden file, outside it."""
    from ocg.weights.hub import revision

    first, digest = converted.source.read_bytes(), revision(str(converted.folder))
    assert main(["convert", "--again"]) == 0
    assert converted.source.read_bytes() == first
    assert revision(str(converted.folder)) == digest
    assert converted.weights_stat.is_file()


def test_weights_are_hashed_when_their_size_or_mtime_moved(converted, capsys):
    weights = converted.folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a copy: same bytes
    assert main(["convert"]) == 0
    converted.weights_stat.write_text("not json")  # the stat unread: hashed, still the same
    assert main(["convert"]) == 0
    data[-1] ^= 0xFF  # the last tensor byte: the header still says the file is whole
    weights.write_bytes(bytes(data))
    line = _refused(capsys)
    assert line.startswith(f"ocg: error: {weights}: changed since its conversion")


def test_a_file_added_or_removed_is_refused(converted, capsys):
    added = converted.folder / "chat_template.jinja.bak"
    added.write_text("{{ messages }}")
    assert _refused(capsys).startswith(f"ocg: error: {added}: not written by its conversion")
    added.unlink()
    removed = converted.folder / "generation_config.json"
    removed.unlink()
    assert _refused(capsys).startswith(f"ocg: error: {removed}: missing")
    (converted.folder / ".notes").write_text("hidden files are the user's")
    assert main(["convert", "--again"]) == 0 and main(["convert"]) == 0


def test_a_record_of_an_earlier_ocg_is_refused_naming_it(converted, capsys):
    record = json.loads(converted.source.read_text())
    del record["files"]
    converted.source.write_text(json.dumps(record))
    line = _refused(capsys)
    assert line.startswith(f"ocg: error: {converted.source}: records no file digests")
    assert "ocg convert --again" in line
    assert main(["convert", "--again"]) == 0 and main(["convert"]) == 0


def test_again_never_replaces_through_a_link(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    _tiny_loaders(monkeypatch)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep").write_text("mine")
    (tmp_path / "cache").mkdir()
    ConvertedModel.named(NAME, MAJOR).folder.symlink_to(theirs)
    assert "a symbolic link" in _refused(capsys, "--again")
    assert sorted(p.name for p in theirs.iterdir()) == ["keep"]


@pytest.fixture(scope="module")
def one_conversion(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        root = tmp_path_factory.mktemp("converted")
        patch.setenv("OCG_MODEL_CACHE", str(root))
        _tiny_loaders(patch)
        embedded.ensure_converted(NAME)
        yield ConvertedModel.named(NAME, MAJOR).folder


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_changed_byte_of_any_file_is_refused(one_conversion, tmp_path_factory, data):
    """The property: whichever file the conversion wrote and whichever byte of it changes, the
    next use refuses that file; a small file even with its mtime put back, a weights file once
    its mtime moved (an edit's: one that puts it back too is what the cheap rule lets through,
    _check_files)."""
    cache = tmp_path_factory.mktemp("cache")
    folder = cache / one_conversion.name
    shutil.copytree(one_conversion, folder)  # copy2: mtimes kept, as recorded
    files = sorted(
        p for p in folder.iterdir() if p.name != "ocg_source.json" and not p.name.startswith(".")
    )
    path = data.draw(st.sampled_from(files))
    content = bytearray(path.read_bytes())
    at = data.draw(st.integers(0, len(content) - 1))
    content[at] ^= data.draw(st.integers(1, 255))
    stat = path.stat()
    path.write_bytes(bytes(content))
    moved = stat.st_mtime_ns + (10**9 if path.suffix == ".safetensors" else 0)
    os.utime(path, ns=(stat.st_atime_ns, moved))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCG_MODEL_CACHE", str(cache))
        with pytest.raises(embedded.OcgInputError) as err:
            embedded.ensure_converted(NAME)
    assert str(path) in str(err.value)
