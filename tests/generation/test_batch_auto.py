"""`batch_size: auto` (ocg/generation/backends/batch_auto.py): the schema takes it, the estimate from a model's
config and free memory, the size a run resolves to recorded in its card and reused on resume."""

import json
from types import SimpleNamespace

import pytest
import yaml

from ocg.cli import main
from ocg.config.model_registry import load_models, parse_models
from ocg.core.errors import OcgInputError
from ocg.generation import generate, read_generations
from ocg.generation.backends import batch_auto

GiB = 1024**3


def llama_config(**changes):
    from transformers import LlamaConfig

    return LlamaConfig(
        **{
            "vocab_size": 49152,
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 16,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 64,
            **changes,
        }
    )


@pytest.mark.parametrize("value", ["auto", 1, 512])
def test_the_schema_takes_auto_or_a_positive_integer(value):
    spec = parse_models(
        {"models": {"m": {"id": "x/y", "batch_size": value, "pad_multiple": value}}}, "f.yaml"
    )["m"]
    assert spec.batch_size == value and spec.pad_multiple == value


@pytest.mark.parametrize("value", ["big", "AUTO", 0, -3, 1.5, True, None])
def test_the_schema_refuses_anything_else_naming_the_field(value):
    with pytest.raises(OcgInputError) as info:
        parse_models({"models": {"m": {"id": "x/y", "batch_size": value}}}, "f.yaml")
    assert (
        str(info.value)
        == f"f.yaml: models.m.batch_size: got {value!r}; expected a positive integer or auto"
    )


def test_the_cli_refuses_a_bad_batch_size_with_one_error_line(tmp_path, capsys):
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  m: {backend: replay, id: x/y, batch_size: big}\n")
    code = main(
        [
            "generate",
            "m",
            "--models-file",
            str(models),
            "--out",
            str(tmp_path / "out"),
            "--subset-k",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert (
        code == 2
        and err
        == f"ocg: error: {models}: models.m.batch_size: got 'big'; expected a positive integer or auto\n"
    )


def test_the_paper_entries_ask_auto():
    paper = [m for m in load_models().values() if m.paper_name and m.backend == "transformers"]
    assert len(paper) >= 30 and all(m.batch_size == "auto" for m in paper)


def test_the_estimate_is_the_rows_that_fit_after_the_weights():
    config = llama_config()
    kv = batch_auto.kv_bytes_per_token(config, 2)
    assert (
        kv == 2 * 16 * 8 * 64 * 2
    )  # keys and values, 16 layers, 8 kv heads of 64, bf16: 32 KiB a token
    row = batch_auto.row_bytes(config, 2, 100, 28)
    assert row == kv * 128 + 100 * (4 * 2048 + 3 * 8192) * 2 + 3 * 4 * 49152
    free, weights = 10 * GiB, 2 * GiB
    out = batch_auto.estimate_batch_size(
        config,
        free_bytes=free,
        weight_bytes=weights,
        dtype_bytes=2,
        longest_prompt=100,
        max_new_tokens=28,
    )
    assert out["batch_size"] == min(
        batch_auto.CAP, int((free - weights) * batch_auto.HEADROOM) // row
    )
    assert out["row_bytes"] == row and out["free_bytes"] == free and out["weight_bytes"] == weights
    assert (
        batch_auto.estimate_batch_size(
            config,
            free_bytes=200 * GiB,
            weight_bytes=weights,
            dtype_bytes=2,
            longest_prompt=100,
            max_new_tokens=28,
        )["batch_size"]
        == batch_auto.CAP
    )
    assert (
        batch_auto.estimate_batch_size(
            config,
            free_bytes=GiB,
            weight_bytes=2 * GiB,
            dtype_bytes=2,
            longest_prompt=100,
            max_new_tokens=28,
        )["batch_size"]
        == 1
    )  # never below one
    small = batch_auto.estimate_batch_size(
        config,
        free_bytes=int(2.1 * GiB),
        weight_bytes=weights,
        dtype_bytes=2,
        longest_prompt=100,
        max_new_tokens=28,
    )["batch_size"]
    assert 1 < small < 40


def test_weights_are_counted_on_the_meta_device_in_the_entrys_setting():
    config = llama_config(
        num_hidden_layers=2,
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
    )
    n = (
        2 * 49152 * 64 + 2 * (64 * 64 * 2 + 64 * 32 * 2 + 3 * 64 * 128 + 2 * 64) + 64
    )  # embeddings and head
    spec = SimpleNamespace(trust_remote_code=False, quantization="none", dtype="bfloat16")
    assert batch_auto._weight_bytes(config, spec) == 2 * n
    assert batch_auto._weight_bytes(
        config, SimpleNamespace(**{**vars(spec), "quantization": "4bit"})
    ) == int(0.5625 * n)


def test_on_cuda_the_estimate_reads_free_memory_and_the_config(tmp_path, monkeypatch):
    import torch

    llama_config().save_pretrained(tmp_path)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda i: (20 * GiB, 80 * GiB))
    spec = SimpleNamespace(
        name="m",
        backend="transformers",
        batch_size="auto",
        trust_remote_code=False,
        quantization="none",
        dtype="bfloat16",
        max_new_tokens=32,
    )
    prompts = SimpleNamespace(
        source=str(tmp_path), revision=None, prompt_lengths=lambda texts: [len(t) for t in texts]
    )
    batch = batch_auto.resolve_batch_size(
        spec, prompts, {"a": "x" * 90, "b": "y" * 10}, tmp_path / "run_card.json", device="cuda"
    )
    how = batch.auto
    assert (
        how["longest_prompt_tokens"] == 90
        and how["free_bytes"] == 20 * GiB
        and how["source"].startswith("estimate")
    )
    assert batch.size == how["batch_size"] > 1
    # a number named by the caller or the entry is used as it is, with nothing to record
    assert batch_auto.resolve_batch_size(spec, prompts, {}, tmp_path / "c", asked=4).auto is None


def test_auto_is_a_number_before_any_backend_is_built_and_the_card_records_how(tmp_path):
    """The backend takes the resolved number (never `auto`) and how it was found, as declared
    arguments; the card's backend block records it (RunCard.batch_size_auto)."""
    from ocg.config.model_registry import get_model
    from ocg.generation.backends import BACKENDS, make_backend, make_prompts
    from ocg.generation.backends.replay_backend import ReplayBackend
    from ocg.records import RunCard

    auto = parse_models(
        {"models": {"m": {"backend": "replay", "id": "x", "batch_size": "auto"}}}, "f"
    )
    with pytest.raises(ValueError, match="batch_size auto reaches a backend unresolved"):
        ReplayBackend(auto["m"])
    spec = get_model("smollm2-135m-instruct").model_copy(update={"batch_size": "auto"})
    prompts = make_prompts(spec)
    rendered = {"i": prompts.render([{"role": "user", "content": "Write about a dog."}])}
    batch = batch_auto.resolve_batch_size(spec, prompts, rendered, tmp_path / "c", device="cpu")
    assert batch == batch_auto.BatchSize(batch_auto.CPU_DEFAULT, batch.auto)
    backend = make_backend(spec, batch, prompts=prompts)
    assert type(backend) is BACKENDS["transformers"] and backend.prompts is prompts
    assert backend.batch_size == backend.max_working == batch_auto.CPU_DEFAULT
    card = RunCard(model="m", backend=backend.card())
    assert card.batch_size_auto == batch.auto and card.batch_size_auto["source"].startswith("fixed")


def _models(tmp_path, batch_size):
    path = tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump(
            {"models": {"m": {"backend": "replay", "id": "x/y", "batch_size": batch_size}}}
        )
    )
    return path


def test_a_run_records_the_size_it_used_and_a_resumed_run_reuses_it(tmp_path):
    out = tmp_path / "out"
    generate(
        "m",
        conditions=["ordered"],
        subset_k=1,
        out_dir=out,
        models_file=_models(tmp_path, "auto"),
        progress=False,
    )
    card = json.loads((out / "m" / "run_card.json").read_text())
    assert (
        card["spec"]["batch_size"] == "auto"
        and card["settings"]["batch_size"] == batch_auto.CPU_DEFAULT
    )
    # a directory filled at batch 8, resumed with `auto`: the same batches, the card's size
    other = tmp_path / "other"
    generate(
        "m",
        conditions=["ordered"],
        subset_k=1,
        out_dir=other,
        models_file=_models(tmp_path, 8),
        progress=False,
    )
    generate(
        "m",
        conditions=["ordered", "original"],
        subset_k=1,
        out_dir=other,
        models_file=_models(tmp_path, "auto"),
        progress=False,
    )
    card = json.loads((other / "m" / "run_card.json").read_text())
    assert card["settings"]["batch_size"] == 8
    assert set(read_generations(other / "m").planned_batch_size) == {8}
    # a number that is not the card's is refused, as before
    with pytest.raises(OcgInputError, match="setting 'batch_size' was 8, now 16"):
        generate(
            "m",
            conditions=["ordered"],
            subset_k=1,
            out_dir=other,
            models_file=_models(tmp_path, 16),
            progress=False,
        )


class FakeModel:
    """Stands in for the weights: records the padded width generate() was given, answers two tokens."""

    device = "cpu"

    def __init__(self):
        self.widths = []

    def generate(self, input_ids, attention_mask, **kwargs):
        import torch

        self.widths.append(input_ids.shape[1])
        return torch.cat([input_ids, torch.full((input_ids.shape[0], 2), 7)], dim=1)


@pytest.mark.parametrize("pad_multiple, device, padded", [("auto", "cpu", False), (8, "cpu", True)])
def test_prompts_are_padded_to_the_multiple_only_where_asked(pad_multiple, device, padded):
    from ocg.config.model_registry import get_model
    from ocg.generation.backends.transformers_backend import TransformersBackend

    spec = get_model("smollm2-135m-instruct")
    backend = TransformersBackend(
        spec.model_copy(update={"pad_multiple": pad_multiple}), device=device
    )
    backend.model, backend.generation_config, backend.eos_ids = FakeModel(), None, {2}
    texts = [
        backend.render([{"role": "user", "content": "Write one sentence with dog, ball, throw."}]),
        backend.render([{"role": "user", "content": "Hi"}]),
    ]
    longest = max(backend.prompt_lengths(texts))
    assert backend._generate_raw(texts, seed=1)[0]["completion_tokens"] == 2
    width = backend.model.widths[0]
    assert (width == -(-longest // 8) * 8) if padded else (width == longest)
    assert backend.pad_multiple == (8 if padded else 1)


def test_a_padded_run_records_its_multiple_and_refuses_to_mix_with_an_unpadded_directory(tmp_path):
    from ocg.config.model_registry import get_model
    from ocg.generation.run_card import card_settings, check_compatible
    from ocg.records import RunCard

    spec = get_model("smollm2-135m-instruct")
    shaped = dict.fromkeys(
        (
            "chat_template_sha256",
            "system_mode",
            "template_default_system_prompt",
            "bos",
            "prompt_date",
        ),
        "x",
    )
    backend = SimpleNamespace(
        resolved_revision=lambda: None,
        batch_size=48,
        prompt_settings=lambda: shaped,
        sampling=None,
        pad_multiple=1,
    )
    plain = card_settings(spec, backend, None)
    assert not plain.has(
        "pad_multiple"
    )  # unpadded (the CPU's auto): the settings before pad_multiple existed
    backend.pad_multiple = 8
    padded = card_settings(spec, backend, None)
    assert padded.pad_multiple == 8
    path = tmp_path / "run_card.json"
    RunCard(model="m", settings=plain).write(path)
    assert check_compatible(path, plain, {}) is not None
    with pytest.raises(OcgInputError, match=r"setting 'pad_multiple' was auto \(unpadded\), now 8"):
        check_compatible(path, padded, {})
    RunCard(model="m", settings=padded).write(path)  # a padded run, resumed off CUDA
    with pytest.raises(OcgInputError, match=r"setting 'pad_multiple' was 8, now 1 \(unpadded\)"):
        check_compatible(path, plain, {})
