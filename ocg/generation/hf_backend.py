"""transformers backend: any causal LM (hub id, local directory, or embedded), greedy, batched."""

from __future__ import annotations

import copy
import time

from ..models import ModelSpec
from .chat import chat_template_sha256, detect_system_mode, render
from .embedded import EMBEDDED_PREFIX, ensure_converted


def _is_oom(exc: BaseException) -> bool:
    import torch
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class TransformersBackend:
    """Loads once; `generate` takes rendered prompts of one planned batch."""

    kind = "transformers"

    def __init__(self, spec: ModelSpec, batch_size: int | None = None, device: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

        self.spec = spec
        self.batch_size = batch_size or spec.batch_size
        self.max_working = self.batch_size  # lowered on CUDA out-of-memory, never raised again
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.embedded_source = None
        source, revision = spec.id, spec.revision
        if spec.id.startswith(EMBEDDED_PREFIX):
            path = ensure_converted(spec.id[len(EMBEDDED_PREFIX):])
            source, revision = str(path), None
            import json
            self.embedded_source = json.loads((path / "ocg_source.json").read_text())
        common = {"revision": revision, "trust_remote_code": spec.trust_remote_code}
        self.tokenizer = AutoTokenizer.from_pretrained(source, **common)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.chat_template_sha256 = chat_template_sha256(self.tokenizer)
        self.system_mode = detect_system_mode(self.tokenizer)

        dtype = "auto" if spec.dtype == "auto" else getattr(torch, spec.dtype)
        kwargs = dict(common, dtype=dtype)
        if spec.quantization == "4bit":
            compute = torch.bfloat16 if spec.dtype == "auto" else dtype
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=compute)
        elif spec.quantization == "8bit":
            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
        if self.device == "cuda":
            kwargs["device_map"] = "auto"
        self.model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
        if self.device != "cuda" and spec.quantization == "none":
            self.model.to(self.device)
        self.model.eval()

        gc = copy.deepcopy(self.model.generation_config)
        gc.update(do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None,
                  max_new_tokens=spec.max_new_tokens, pad_token_id=self.tokenizer.pad_token_id)
        if gc.eos_token_id is None:
            gc.eos_token_id = self.tokenizer.eos_token_id
        self.generation_config = gc
        eos = gc.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])

    # -- prompts ---------------------------------------------------------------------------
    def render(self, messages: list[dict]) -> str:
        return render(self.tokenizer, messages, self.system_mode)

    def prompt_lengths(self, rendered: list[str]) -> list[int]:
        enc = self.tokenizer(rendered, add_special_tokens=False)
        return [len(ids) for ids in enc["input_ids"]]

    # -- generation --------------------------------------------------------------------------
    def _generate_raw(self, texts: list[str]) -> list[dict]:
        import torch
        from transformers import set_seed

        set_seed(self.spec.seed)
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        with torch.inference_mode():
            out = self.model.generate(**enc, generation_config=self.generation_config)
        new = out[:, enc["input_ids"].shape[1]:].tolist()
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
        results = []
        for ids, n_prompt in zip(new, prompt_tokens):
            stop = next((i for i, t in enumerate(ids) if t in self.eos_ids), None)
            kept = ids if stop is None else ids[:stop]
            results.append({
                "raw": self.tokenizer.decode(kept, skip_special_tokens=True),
                "finish_reason": "length" if stop is None else "stop",
                "prompt_tokens": int(n_prompt),
                "completion_tokens": len(ids) if stop is None else stop + 1,
            })
        return results

    def generate(self, rendered: list[str]) -> list[dict]:
        """One planned batch; split into chunks of the size that fits, halving on CUDA OOM."""
        results: list[dict] = []
        start = 0
        while start < len(rendered):
            size = min(self.max_working, len(rendered) - start)
            t0 = time.perf_counter()
            try:
                chunk = self._generate_raw(rendered[start:start + size])
            except Exception as exc:  # noqa: BLE001 - only OOM is handled, the rest re-raised
                if not _is_oom(exc) or size == 1:
                    raise
                import torch
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                self.max_working = max(1, size // 2)
                continue
            seconds = time.perf_counter() - t0
            for r in chunk:
                r.update(batch_size=size, seconds=round(seconds / size, 4))
            results.extend(chunk)
            start += size
        return results

    # -- provenance --------------------------------------------------------------------------
    def card(self) -> dict:
        import torch
        cfg = self.model.config
        resolved = getattr(cfg, "_commit_hash", None)
        if self.embedded_source:
            resolved = f"gguf-sha256:{self.embedded_source['gguf_sha256']}"
        return {
            "backend": self.kind,
            "resolved_revision": resolved,
            "model_dtype": str(self.model.dtype).replace("torch.", ""),
            "loaded_in_4bit": bool(getattr(self.model, "is_loaded_in_4bit", False)),
            "loaded_in_8bit": bool(getattr(self.model, "is_loaded_in_8bit", False)),
            "device": str(self.model.device),
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "chat_template_sha256": self.chat_template_sha256,
            "system_mode": self.system_mode,
            "eos_token_ids": sorted(self.eos_ids),
            "embedded_source": self.embedded_source,
            "planned_batch_size": self.batch_size,
            "working_batch_size": self.max_working,
        }
