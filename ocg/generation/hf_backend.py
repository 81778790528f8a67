"""transformers backend: any causal LM (hub id, local directory, or embedded), greedy, batched
(or sampled, when a run asks for repeated samples: ocg/generation/sampling.py).

The tokenizer loads at once (prompts are rendered and checked before any weights load); the
model loads on the first batch. Decoding is plain greedy unless the entry opts into the model's
own generation_config.json (docs/METHODS.md, "Decoding"); the effective configuration is
recorded in the run card.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import time

from .. import hub
from ..embedded import EMBEDDED_PREFIX, ensure_converted
from ..errors import OcgInputError
from ..layout import ConvertedModel
from ..models import ModelSpec, generation_defaults
from .chat import (
    bos_placement,
    chat_template_sha256,
    date_context,
    detect_system_mode,
    render,
    template_default_system_prompt,
    tokenizer_adds_bos,
)
from .sampling import batch_seed, sample_seed


def _is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


@functools.cache  # asked twice per batch; inspect.signature is not free
def _merges_model_defaults() -> bool:
    """transformers 5 dropped generate(use_model_defaults=False): it fills every setting left unset
    from model.generation_config, then from its global defaults (read from generate's signature)."""
    import inspect

    from transformers import GenerationMixin

    return "use_model_defaults" not in inspect.signature(GenerationMixin.generate).parameters


def _looks_local(model_id: str) -> bool:
    return model_id.startswith(("/", "./", "../", "~")) or os.path.isdir(
        os.path.expanduser(model_id)
    )


class TransformersBackend:
    """Tokenizer at once, model on first use; `generate` takes rendered prompts of one planned batch."""

    kind = "transformers"
    sampling: dict | None = (
        None  # the run's temperature and top_p (make_backend); None: the entry's decoding
    )
    applies_grammars = True  # constrained conditions: run.py fills `grammars`
    grammars: dict[
        str, str
    ] = {}  # instance id: the expression its answer is forced to (constrained.py)

    def __init__(self, spec: ModelSpec, batch_size: int | None = None, device: str | None = None):
        import torch
        from transformers import AutoTokenizer

        self.spec = spec
        self.batch_size = batch_size or spec.batch_size
        self.max_working = self.batch_size  # lowered on CUDA out-of-memory, never raised again
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        # prompts padded to a multiple, so padded shapes repeat across batches (CUDA pays a first-call
        # cost per new shape); 1 (none) off CUDA, where more padding is only more arithmetic
        self.pad_multiple = (
            spec.pad_multiple
            if spec.pad_multiple != "auto"
            else (8 if self.device == "cuda" else 1)
        )
        self.embedded_source = None
        self.source, self.revision = spec.id, spec.revision
        if spec.id.startswith(EMBEDDED_PREFIX):
            path = ensure_converted(spec.id[len(EMBEDDED_PREFIX) :])
            self.source, self.revision = str(path), None
            self.embedded_source = json.loads(ConvertedModel(path).source.read_text())
        elif _looks_local(spec.id):
            self.source, self.revision = os.path.expanduser(spec.id), None
            if not os.path.isdir(self.source):
                raise OcgInputError(
                    f"models.{spec.name}.id", f"local model directory {spec.id} does not exist"
                )
            if not os.path.isfile(os.path.join(self.source, "config.json")):
                raise OcgInputError(
                    f"models.{spec.name}.id",
                    f"local model directory {spec.id} holds "
                    "no model (no config.json); expected a transformers model folder",
                )
        self.tokenizer = AutoTokenizer.from_pretrained(
            self.source, revision=self.revision, trust_remote_code=spec.trust_remote_code
        )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.chat_template_sha256 = chat_template_sha256(self.tokenizer)
        self.system_mode = (
            detect_system_mode(self.tokenizer, spec.prompt_date)
            if spec.system_mode == "auto"
            else spec.system_mode
        )
        self.default_system_prompt = template_default_system_prompt(
            self.tokenizer, spec.prompt_date
        )
        self.adds_bos = tokenizer_adds_bos(self.tokenizer)
        self.bos_mode = bos_placement(self.tokenizer, spec.prompt_date, self.adds_bos)
        self.model = None
        self.load_seconds = None
        self.generation_config = None
        self.eos_ids: set[int] = set()

    def _load_model(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        spec, t0 = self.spec, time.perf_counter()
        dtype = "auto" if spec.dtype == "auto" else getattr(torch, spec.dtype)
        kwargs = {
            "revision": self.revision,
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
        if self.device == "cuda":
            kwargs["device_map"] = "auto"
        self.model = AutoModelForCausalLM.from_pretrained(self.source, **kwargs)
        if self.device != "cuda" and spec.quantization == "none":
            self.model.to(self.device)
        self.model.eval()
        self.generation_config = self._generation_config()
        if (
            _merges_model_defaults()
        ):  # transformers 5: nothing of the model's own is left to merge in
            self.model.generation_config = copy.deepcopy(self.generation_config)
        eos = self.generation_config.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        if (
            self.device == "cuda"
        ):  # CUDA context, cuBLAS handles and kernels paid for here, not in batch 1
            warm = self.tokenizer(["Hello"], return_tensors="pt", add_special_tokens=False).to(
                self.model.device
            )
            short = copy.deepcopy(self.generation_config)
            short.update(max_new_tokens=2, min_new_tokens=None)
            with torch.inference_mode():
                self.model.generate(
                    **warm,
                    generation_config=short,
                    **({} if _merges_model_defaults() else {"use_model_defaults": False}),
                )
        self.load_seconds = round(
            time.perf_counter() - t0, 2
        )  # inside the run's `seconds` (its first batch)

    def _generation_config(self):
        """Plain greedy (nothing else changes the scores), or the model's own defaults on opt-in;
        then the entry's overrides. Nothing of the model's is merged in by generate() (4.x:
        use_model_defaults=False; 5.x: this config replaces the model's, see _merges_model_defaults)."""
        from transformers import GenerationConfig

        own = self.model.generation_config
        if self.spec.decoding == "model_defaults":
            gc = copy.deepcopy(own)
        else:
            gc = GenerationConfig(do_sample=False, num_beams=1)
        gc.update(**self.spec.generation_overrides)
        gc.update(
            max_new_tokens=self.spec.max_new_tokens,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=own.eos_token_id
            if own.eos_token_id is not None
            else self.tokenizer.eos_token_id,
            bos_token_id=own.bos_token_id,
        )
        if self.spec.decoding == "greedy":
            gc.update(do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None)
        if (
            self.sampling
        ):  # the run's repeated samples: temperature and nucleus sampling, nothing else
            gc.update(do_sample=True, num_beams=1, top_k=None, **self.sampling)
        gc.validate(strict=True)
        return gc

    # -- prompts ---------------------------------------------------------------------------
    def render(self, messages: list[dict]) -> str:
        return render(
            self.tokenizer, messages, self.system_mode, self.spec.prompt_date, self.adds_bos
        )

    def prompt_lengths(self, rendered: list[str]) -> list[int]:
        enc = self.tokenizer(rendered, add_special_tokens=False)
        return [len(ids) for ids in enc["input_ids"]]

    # -- generation --------------------------------------------------------------------------
    def _generate_raw(
        self, texts: list[str], seed: int, grammars: list[str | None] | None = None
    ) -> list[dict]:
        import torch
        from transformers import set_seed

        from .constrained import processors_for

        if self.model is None:
            self._load_model()
        processors = processors_for(
            self, grammars or []
        )  # None unless the instances are constrained
        set_seed(seed)
        enc = self.tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            pad_to_multiple_of=self.pad_multiple if self.pad_multiple > 1 else None,
        )
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        with torch.inference_mode():
            out = self.model.generate(
                **enc,
                generation_config=self.generation_config,
                **({"logits_processor": processors} if processors else {}),
                **({} if _merges_model_defaults() else {"use_model_defaults": False}),
            )
        new = out[:, enc["input_ids"].shape[1] :].tolist()
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
        results = []
        for ids, n_prompt in zip(new, prompt_tokens):
            stop = next((i for i, t in enumerate(ids) if t in self.eos_ids), None)
            kept = ids if stop is None else ids[:stop]
            results.append(
                {
                    "raw": self.tokenizer.decode(kept, skip_special_tokens=True),
                    "finish_reason": "length" if stop is None else "stop",
                    "prompt_tokens": int(n_prompt),
                    "completion_tokens": len(ids) if stop is None else stop + 1,
                }
            )
        return results

    def _seed(self, instance_ids: list[str] | None, start: int, sample: int) -> int:
        """The entry's seed (greedy); sampled: from the sample's seed and the chunk's first id."""
        if not self.sampling:
            return self.spec.seed
        if not instance_ids:
            raise ValueError(
                "sampled generation seeds each batch by its instances: pass instance_ids"
            )
        return batch_seed(sample_seed(self.spec.seed, sample), instance_ids[start])

    def generate(
        self, rendered: list[str], instance_ids: list[str] | None = None, sample: int = 0
    ) -> list[dict]:
        """One planned batch of sample `sample`; split into chunks of the size that fits, halving
        on CUDA OOM (each chunk seeded as a batch of its own)."""
        results: list[dict] = []
        start = 0
        while start < len(rendered):
            size = min(self.max_working, len(rendered) - start)
            t0 = time.perf_counter()
            try:
                chunk = self._generate_raw(
                    rendered[start : start + size],
                    self._seed(instance_ids, start, sample),
                    [self.grammars.get(i) for i in (instance_ids or [])[start : start + size]],
                )
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
    def resolved_revision(self) -> str | None:
        if self.embedded_source:
            return f"gguf-sha256:{self.embedded_source['gguf_sha256']}"
        commit = getattr(self.tokenizer, "_commit_hash", None) or getattr(
            getattr(self.model, "config", None), "_commit_hash", None
        )
        if commit or os.path.isdir(self.source):  # a local directory: no hub commit
            return commit
        return hub.revision(self.source, self.revision)  # transformers 5 offline records none

    def prompt_settings(self) -> dict:
        """What shapes the prompts, known before any weights load (checked on resume)."""
        return {
            "chat_template_sha256": self.chat_template_sha256,
            "system_mode": self.system_mode,
            "template_default_system_prompt": self.default_system_prompt,
            "prompt_date": self.spec.prompt_date,
            "template_date_string": date_context(self.spec.prompt_date)["date_string"],
            "bos": self.bos_mode,
        }

    def card(self) -> dict:
        import torch

        card = {
            "backend": self.kind,
            "resolved_revision": self.resolved_revision(),
            **self.prompt_settings(),
            "embedded_source": self.embedded_source,
            "planned_batch_size": self.batch_size,
            "working_batch_size": self.max_working,
            "batch_size_auto": getattr(self, "batch_size_auto", None),
            "pad_multiple": self.pad_multiple,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        }
        if (
            self.load_seconds is not None
        ):  # set last: a load cut short (a signal) leaves no half-state here
            card.update(
                {
                    "model_dtype": str(self.model.dtype).replace("torch.", ""),
                    "attention": self.model.config._attn_implementation,  # what `auto` resolved to
                    "loaded_in_4bit": bool(getattr(self.model, "is_loaded_in_4bit", False)),
                    "loaded_in_8bit": bool(getattr(self.model, "is_loaded_in_8bit", False)),
                    "device": str(self.model.device),
                    "load_seconds": self.load_seconds,
                    "eos_token_ids": sorted(self.eos_ids),
                    "generation_config": effective_generation_config(self.generation_config),
                }
            )
        return card


def effective_generation_config(gc) -> dict:
    """Every setting of the GenerationConfig that generate() receives, defaults included (on
    transformers 5, the global defaults it fills into settings left None)."""
    values = gc.to_dict()
    if _merges_model_defaults():  # 4.x passes None on as None
        values.update({k: v for k, v in generation_defaults().items() if values.get(k) is None})
    return {
        k: v
        for k, v in sorted(values.items())
        if not k.startswith("_") and k != "transformers_version"
    }
