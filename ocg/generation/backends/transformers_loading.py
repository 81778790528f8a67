"""Where the transformers backend's weights come from and how they load: the source (hub id,
local directory or embedded model), from_pretrained's settings (dtype, quantization, attention,
device), the warm-up on CUDA, and the generation config that generate() receives."""

from __future__ import annotations

import copy
import functools
import json
import os

from ...config.model_checks import generation_defaults
from ...config.models_file import ModelEntry
from ...core.errors import OcgInputError
from ...core.layout import ConvertedModel
from ...weights.embedded import EMBEDDED_PREFIX, ensure_converted


@functools.cache  # asked twice per batch; inspect.signature is not free
def merges_model_defaults() -> bool:
    """transformers 5 dropped generate(use_model_defaults=False): it fills every setting left unset
    from model.generation_config, then from its global defaults (read from generate's signature)."""
    import inspect

    from transformers import GenerationMixin

    return "use_model_defaults" not in inspect.signature(GenerationMixin.generate).parameters


def _looks_local(model_id: str) -> bool:
    return model_id.startswith(("/", "./", "../", "~")) or os.path.isdir(
        os.path.expanduser(model_id)
    )


def default_device() -> str:
    """Where a transformers entry runs unless told: CUDA when there is one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_source(spec: ModelEntry) -> tuple[str, str | None, dict | None]:
    """What from_pretrained reads (a hub id, a directory), its revision, and the embedded model's
    source record (None unless embedded); a local directory without a model is refused."""
    if spec.id.startswith(EMBEDDED_PREFIX):
        path = ensure_converted(spec.id[len(EMBEDDED_PREFIX) :])
        return str(path), None, json.loads(ConvertedModel(path).source.read_text())
    if not _looks_local(spec.id):
        return spec.id, spec.revision, None
    source = os.path.expanduser(spec.id)
    if not os.path.isdir(source):
        raise OcgInputError(
            f"models.{spec.name}.id", f"local model directory {spec.id} does not exist"
        )
    if not os.path.isfile(os.path.join(source, "config.json")):
        raise OcgInputError(
            f"models.{spec.name}.id",
            f"local model directory {spec.id} holds "
            "no model (no config.json); expected a transformers model folder",
        )
    return source, None, None


def load_weights(spec: ModelEntry, source: str, revision: str | None, device: str):
    """The model, as the entry asks (dtype, quantization, attention), on `device`, in eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    dtype = "auto" if spec.dtype == "auto" else getattr(torch, spec.dtype)
    kwargs = {
        "revision": revision,
        "trust_remote_code": spec.trust_remote_code,
        "dtype": dtype,
    }
    if spec.quantization == "4bit":
        compute = torch.bfloat16 if spec.dtype == "auto" else dtype
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=compute,
        )
    elif spec.quantization == "8bit":
        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
    if spec.attention != "auto":
        kwargs["attn_implementation"] = spec.attention
    if device == "cuda":
        kwargs["device_map"] = "auto"
    model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    if device != "cuda" and spec.quantization == "none":
        model.to(device)
    model.eval()
    return model


def warm_up(model, tokenizer, generation_config) -> None:
    """Two tokens generated once, so that the first batch does not pay for CUDA's first calls."""
    import torch

    warm = tokenizer(["Hello"], return_tensors="pt", add_special_tokens=False).to(model.device)
    short = copy.deepcopy(generation_config)
    short.update(max_new_tokens=2, min_new_tokens=None)
    with torch.inference_mode():
        model.generate(
            **warm,
            generation_config=short,
            **({} if merges_model_defaults() else {"use_model_defaults": False}),
        )


def generation_config_for(spec: ModelEntry, own_config, tokenizer, sampling: dict | None):
    """Plain greedy (nothing else changes the scores), or the model's own defaults on opt-in;
    then the entry's overrides. Nothing of the model's is merged in by generate() (4.x:
    use_model_defaults=False; 5.x: this config replaces the model's, see merges_model_defaults)."""
    from transformers import GenerationConfig

    if spec.decoding == "model_defaults":
        gc = copy.deepcopy(own_config)
    else:
        gc = GenerationConfig(do_sample=False, num_beams=1)
    gc.update(**spec.generation_overrides)
    gc.update(
        max_new_tokens=spec.max_new_tokens,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=own_config.eos_token_id
        if own_config.eos_token_id is not None
        else tokenizer.eos_token_id,
        bos_token_id=own_config.bos_token_id,
    )
    if spec.decoding == "greedy":
        gc.update(do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None)
    if sampling:  # the run's repeated samples: temperature and nucleus sampling, nothing else
        gc.update(do_sample=True, num_beams=1, top_k=None, **sampling)
    gc.validate(strict=True)
    return gc


def effective_generation_config(gc) -> dict:
    """Every setting of the GenerationConfig that generate() receives, defaults included (on
    transformers 5, the global defaults it fills into settings left None)."""
    values = gc.to_dict()
    if merges_model_defaults():  # 4.x passes None on as None
        values.update({k: v for k, v in generation_defaults().items() if values.get(k) is None})
    return {
        k: v
        for k, v in sorted(values.items())
        if not k.startswith("_") and k != "transformers_version"
    }
