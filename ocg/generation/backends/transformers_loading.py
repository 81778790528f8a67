"""Where the transformers backend's weights come from and how they load: the source (hub id,
local directory or embedded model), from_pretrained's settings (dtype, quantization, attention,
device), the warm-up on CUDA, and the generation config that generate() receives."""

from __future__ import annotations

import copy
import fnmatch
import functools
import json
import os
from typing import TYPE_CHECKING, Any

from ...config.model_checks import generation_defaults
from ...config.models_file import ModelEntry
from ...core.errors import OcgInputError
from ...core.layout import ConvertedModel
from ...weights.embedded import EMBEDDED_PREFIX, ensure_converted
from ...weights.whole import safetensors_problem

if TYPE_CHECKING:
    from transformers import GenerationConfig


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


WEIGHTS = ("*.safetensors", "*.bin")  # what from_pretrained reads from a folder (shards too)
MAX_CONFIG_BYTES = 16 * 2**20  # a model's config.json is kilobytes: a larger one is no config


def local_path(model_id: str) -> str | None:
    """The path on this machine that a model id names (~ expanded); None for a hub id. An
    embedded id is none of these: it is converted on demand (ensure_converted)."""
    if model_id.startswith(EMBEDDED_PREFIX) or not _looks_local(model_id):
        return None
    return os.path.expanduser(model_id)


def _config_problem(config: str) -> str | None:
    """Why a folder's config.json is no model's config (unreadable, not a JSON mapping); None
    where it reads."""
    try:
        if os.path.getsize(config) > MAX_CONFIG_BYTES:
            return f"its config.json is over {MAX_CONFIG_BYTES // 2**20} MiB"
        with open(config, "rb") as f:
            value = json.loads(f.read())
    except OSError as exc:
        return f"its config.json cannot be read: {exc.strerror}"
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        return f"its config.json is not JSON: {str(exc).splitlines()[0][:120]}"
    return None if isinstance(value, dict) else "its config.json is not a JSON mapping"


def check_model_folder(where: str, shown: str, folder: str) -> str:
    """A local model folder that can be loaded (from_pretrained, or a server started on it): there,
    a readable config.json that is a JSON mapping, and weights beside it (*.safetensors, *.bin);
    else one error at `where` naming the folder as the entry wrote it (`shown`). Cheap: a listing
    and small reads, no weights loaded: a *.safetensors file shorter or longer than its own header
    says (a download or copy cut short) is refused here, not as a traceback from the loader."""
    if not os.path.isdir(folder):
        kind = "is not a directory" if os.path.exists(folder) else "does not exist"
        raise OcgInputError(where, f"local model directory {shown} {kind}")
    try:
        names = os.listdir(folder)
    except OSError as exc:
        raise OcgInputError(
            where, f"local model directory {shown} cannot be read ({exc.strerror})"
        ) from None
    why: str | None
    if not names:
        why = "it is empty"
    elif "config.json" not in names or not os.path.isfile(os.path.join(folder, "config.json")):
        why = "no config.json"
    else:
        why = _config_problem(os.path.join(folder, "config.json")) or (
            None
            if any(fnmatch.fnmatch(n, w) for n in names for w in WEIGHTS)
            else f"no weights: no {' or '.join(WEIGHTS)} file"
        )
    if why:
        raise OcgInputError(
            where,
            f"local model directory {shown} holds no model ({why}); expected a transformers "
            "model folder (config.json and its weights)",
        )
    for name in sorted(n for n in names if n.endswith(".safetensors")):
        problem = safetensors_problem(os.path.join(folder, name))
        if problem:
            raise OcgInputError(
                where, f"local model directory {shown}: {name} {problem}; download or copy it again"
            )
    return folder


def check_local_model(spec: ModelEntry) -> None:
    """The local folders an entry loads, checked before any work (check_model_folder): a
    transformers entry's id, or what an openai entry's `api.server` serves ({id}, and {model_dir}
    where set; a single file there, e.g. a GGUF, is the server's business). Hub and embedded ids
    are not checked here."""
    if spec.backend == "transformers":
        named = [("id", spec.id, local_path(spec.id))]
    elif spec.backend == "openai" and spec.api is not None and spec.api.server is not None:
        model_dir = spec.api.server.model_dir
        named = [
            ("id", spec.id, local_path(spec.id)),
            ("api.server.model_dir", model_dir, model_dir and os.path.expanduser(model_dir)),
        ]
        named = [(f, v, p) for f, v, p in named if p and not os.path.isfile(p)]
    else:
        return
    for field, value, path in named:
        if path:
            check_model_folder(f"models.{spec.name}.{field}", value, path)


def resolve_source(spec: ModelEntry) -> tuple[str, str | None, dict | None]:
    """What from_pretrained reads (a hub id, a directory), its revision, and the embedded model's
    source record (None unless embedded); a local directory without a model is refused
    (check_model_folder)."""
    if spec.id.startswith(EMBEDDED_PREFIX):
        path = ensure_converted(spec.id[len(EMBEDDED_PREFIX) :])
        return str(path), None, json.loads(ConvertedModel(path).source.read_text())
    source = local_path(spec.id)
    if source is None:
        return spec.id, spec.revision, None
    return check_model_folder(f"models.{spec.name}.id", spec.id, source), None, None


def load_weights(
    spec: ModelEntry, source: str, revision: str | None, device: str
) -> Any:  # a transformers model (transformers_backend.py: why Any)
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
        model.to(device)  # type: ignore[arg-type]  # @wraps(Module.to) in transformers: mypy binds `device` as self
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


def generation_config_for(
    spec: ModelEntry, own_config, tokenizer, sampling: dict | None
) -> GenerationConfig:
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
