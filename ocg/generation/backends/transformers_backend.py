"""transformers backend: any causal LM (hub id, local directory, or embedded), greedy, batched
(or sampled, when a run asks for repeated samples: ocg/generation/sampling.py).

The tokenizer loads at once (prompts are rendered and checked before any weights load); the
model loads on the first batch. Decoding is plain greedy unless the entry opts into the model's
own generation_config.json (docs/METHODS.md, "Decoding"); the effective configuration is
recorded in the run card.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...config.models_file import ModelEntry
from ...core.progress import stage
from ...records import BackendBlock
from ...weights import hub
from ..sampling import batch_seed, sample_seed
from .batch_auto import BatchSize, given_batch
from .chat import (
    bos_placement,
    chat_template_sha256,
    date_context,
    detect_system_mode,
    render,
    template_default_system_prompt,
    tokenizer_adds_bos,
)
from .transformers_loading import (
    default_device,
    effective_generation_config,
    generation_config_for,
    load_weights,
    merges_model_defaults,
    resolve_source,
    warm_up,
)

if TYPE_CHECKING:
    from transformers import GenerationConfig


def _is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class TransformersPrompts:
    """A transformers entry's prompt side: its tokenizer (loaded at once, no weights), how its chat
    template takes a system turn, a date and BOS; renders and measures prompts. Built before the
    backend, so that `batch_size: auto` can be resolved from the rendered prompts first."""

    def __init__(self, spec: ModelEntry):
        from transformers import AutoTokenizer

        self.spec = spec
        self.source, self.revision, self.embedded_source = resolve_source(spec)
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

    def render(self, messages: list[dict]) -> str:
        return render(
            self.tokenizer, messages, self.system_mode, self.spec.prompt_date, self.adds_bos
        )

    def prompt_lengths(self, rendered: list[str]) -> list[int]:
        enc = self.tokenizer(rendered, add_special_tokens=False)
        return [len(ids) for ids in enc["input_ids"]]

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


class TransformersBackend:
    """Its prompts' tokenizer, the model on first use; `generate` takes rendered prompts of one
    planned batch, at a batch size already resolved (batch_auto.py: `auto` never reaches here)."""

    kind: ClassVar[str] = "transformers"
    applies_grammars: ClassVar[bool] = (
        True  # constrained conditions: their grammars are given to the constructor
    )
    prompts_for = TransformersPrompts  # the prompt side, built first (make_prompts)

    def __init__(
        self,
        spec: ModelEntry,
        batch: BatchSize | int | None = None,
        *,
        sampling: dict | None = None,
        grammars: Mapping[str, str] | None = None,
        prompts: TransformersPrompts | None = None,
        instances: object = None,
        device: str | None = None,
    ):
        """`batch`: the run's batch size, resolved once before (batch_auto.py: `auto` never
        reaches here; an int: a caller's number; None: the entry's number, for a backend built on
        an entry alone); `sampling`: the run's temperature and top_p (None: the entry's
        decoding); `grammars`: instance id -> the expression its answer is forced to
        (constrained.py); `prompts`: the entry's prompt side if built already; `instances`:
        unused (it answers prompts, not instances)."""
        self.spec = spec
        self.sampling = sampling
        self.grammars = dict(grammars or {})
        given = given_batch(spec, batch)
        self.batch_size = given.size
        self.batch_size_auto = given.auto
        self.max_working = self.batch_size  # lowered on CUDA out-of-memory, never raised again
        self._grammar_compiler: Any = None  # built on the first constrained batch
        self.device = device or default_device()
        # prompts padded to a multiple, so padded shapes repeat across batches (CUDA pays a first-call
        # cost per new shape); 1 (none) off CUDA, where more padding is only more arithmetic
        self.pad_multiple = (
            spec.pad_multiple
            if spec.pad_multiple != "auto"
            else (8 if self.device == "cuda" else 1)
        )
        self.prompts = prompts or TransformersPrompts(spec)
        self.tokenizer = self.prompts.tokenizer
        self.source, self.revision = self.prompts.source, self.prompts.revision
        self.embedded_source = self.prompts.embedded_source
        self.system_mode = self.prompts.system_mode
        # loaded on the first batch; Any: transformers' own annotations reject generate() on an
        # AutoModelForCausalLM model (its `self` type), and differ between the two stacks
        self.model: Any | None = None
        self.load_seconds: float | None = None
        self.generation_config: GenerationConfig | None = None
        self.eos_ids: set[int] = set()

    @property
    def loaded_model(self) -> Any:
        """The model, once loaded (on the first batch: `_generate_raw`)."""
        if self.model is None:
            raise RuntimeError(
                f"{self.spec.name}: its weights are not loaded yet (they load on the first batch)"
            )
        return self.model

    def _load_model(self) -> None:
        t0 = time.perf_counter()
        spec = self.spec
        with stage(
            f"{spec.name}: loading the model ({spec.quantization}, {spec.dtype}) on {self.device}"
        ):
            model = self.model = load_weights(spec, self.source, self.revision, self.device)
        gc = self.generation_config = self._generation_config()
        if (
            merges_model_defaults()
        ):  # transformers 5: nothing of the model's own is left to merge in
            model.generation_config = copy.deepcopy(gc)
        eos = gc.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else [eos])
        if (
            self.device == "cuda"
        ):  # CUDA context, cuBLAS handles and kernels paid for here, not in batch 1
            with stage(f"{spec.name}: warming up on CUDA (two tokens, once)"):
                warm_up(model, self.tokenizer, gc)
        self.load_seconds = round(
            time.perf_counter() - t0, 2
        )  # inside the run's `seconds` (its first batch)

    def _generation_config(self) -> GenerationConfig:
        return generation_config_for(
            self.spec, self.loaded_model.generation_config, self.tokenizer, self.sampling
        )

    # -- prompts ---------------------------------------------------------------------------
    def render(self, messages: list[dict]) -> str:
        return self.prompts.render(messages)

    def prompt_lengths(self, rendered: list[str]) -> list[int]:
        return self.prompts.prompt_lengths(rendered)

    def prompt_settings(self) -> dict:
        return self.prompts.prompt_settings()

    # -- generation --------------------------------------------------------------------------
    def _generate_raw(
        self, texts: list[str], seed: int, grammars: list[str | None] | None = None
    ) -> list[dict]:
        import torch
        from transformers import set_seed

        if self.model is None:
            self._load_model()
        model = self.loaded_model
        processors = self._processors(grammars or [])  # None unless the instances are constrained
        set_seed(seed)
        enc = self.tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            pad_to_multiple_of=self.pad_multiple if self.pad_multiple > 1 else None,
        )
        enc = {k: v.to(model.device) for k, v in enc.items()}
        with torch.inference_mode():
            out = model.generate(
                **enc,
                generation_config=self.generation_config,
                **({"logits_processor": processors} if processors else {}),
                **({} if merges_model_defaults() else {"use_model_defaults": False}),
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

    def work_at(self, size: int) -> None:
        """Generate in chunks of `size` from now on (a benchmark measuring one batch size; a run
        only lowers it itself, on CUDA out-of-memory)."""
        self.max_working = size

    def _processors(self, regexes: list[str | None]) -> list | None:
        """The batch's logits processors (constrained.py), its grammar compiler built once."""
        from .constrained import Compiler, processors_for

        if any(regexes) and self._grammar_compiler is None:
            self._grammar_compiler = Compiler(
                self.tokenizer, self.loaded_model.config.vocab_size, sorted(self.eos_ids)
            )
        return processors_for(self._grammar_compiler, regexes)

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

    def card(self) -> BackendBlock:
        """The run card's `backend`: the planned and working batch sizes, the device, and once the
        weights loaded, what they loaded as."""
        import torch

        card = {
            "backend": self.kind,
            "resolved_revision": self.resolved_revision(),
            **self.prompt_settings(),
            "embedded_source": self.embedded_source,
            "planned_batch_size": self.batch_size,
            "working_batch_size": self.max_working,
            "batch_size_auto": self.batch_size_auto,
            "pad_multiple": self.pad_multiple,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        }
        if (
            self.load_seconds is not None
        ):  # set last: a load cut short (a signal) leaves no half-state here
            model = self.loaded_model
            card.update(
                {
                    "model_dtype": str(model.dtype).replace("torch.", ""),
                    "attention": model.config._attn_implementation,  # what `auto` resolved to
                    "loaded_in_4bit": bool(getattr(model, "is_loaded_in_4bit", False)),
                    "loaded_in_8bit": bool(getattr(model, "is_loaded_in_8bit", False)),
                    "device": str(model.device),
                    "load_seconds": self.load_seconds,
                    "eos_token_ids": sorted(self.eos_ids),
                    "generation_config": effective_generation_config(self.generation_config),
                }
            )
        return BackendBlock.model_validate(card)
