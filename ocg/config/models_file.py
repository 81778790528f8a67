"""A models file (params/models.yaml): its entries, their api, server and replay blocks.

ModelEntry is the one class of a model entry: the models file's loader
(ocg/config/model_registry.py) returns it, and every consumer (backends, run card, scoring,
sweeps, analyses) reads it by attribute. Each field's default is written here once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import Discriminator, Field, Tag, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from .field_types import NAMES_AS_KEYS, Date, EnvName, Label, Name
from .file_model import AutoOrPositive, ConfigModel, KeepInt, checked
from .model_checks import (
    RATES_SCHEMA,
    URL_PATTERN,
    check_command,
    check_generation_overrides,
    check_id,
    check_rates,
    check_url,
)

# Each choice once, as the Literal its fields are typed with; the tuple of its values from it.
BackendName = Literal["transformers", "openai", "replay"]  # replay: answers from a file or a writer
BACKENDS = get_args(BackendName)
Quantization = Literal["none", "4bit", "8bit"]
QUANTIZATIONS = get_args(Quantization)
Dtype = Literal["auto", "float32", "bfloat16", "float16"]
DTYPES = get_args(Dtype)
# auto: transformers' choice (sdpa where the model supports it); docs/METHODS.md, "Decoding"
Attention = Literal["auto", "sdpa", "eager"]
ATTENTIONS = get_args(Attention)
Extraction = Literal["plain", "think", "marco_o1"]
EXTRACTIONS = get_args(Extraction)
# auto: probe the chat template (API models: system)
SystemMode = Literal["auto", "system", "folded"]
SYSTEM_MODES = get_args(SystemMode)
Decoding = Literal["greedy", "model_defaults"]  # see docs/METHODS.md, "Decoding"
DECODINGS = get_args(Decoding)
SystemPrompt = Literal["paper", "template_default"]
SYSTEM_PROMPTS = get_args(SystemPrompt)
# The calendar date every chat template sees (Llama 3.x writes "Today Date: ..." into the system
# turn). The Llama 3.1 template's own fallback date; pinned so a rerun asks the same prompt.
DEFAULT_PROMPT_DATE = "2024-07-26"
# A reference entry's name starts with this, and only a reference entry's (_Entry._reference_name).
REFERENCE_PREFIX = "ref-"
# The one condition a reference entry answers: its sentences were asked for without an order
REFERENCE_CONDITION = "original"
SEED_MAX = 2**32 - 1  # transformers' set_seed seeds numpy, which takes no more
MAX_SECONDS = 7 * 24 * 3600  # a wait longer than a week is a typo (sockets overflow near 1e12 s)
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS), KeepInt]
PositiveSeconds = Annotated[float, Field(gt=0, le=MAX_SECONDS), KeepInt]
NonNegative = Annotated[float, Field(ge=0), KeepInt]
MAX_NEW_TOKENS = 65_536  # longer than any chat model here writes; a larger budget is a typo


class ServerBlock(ConfigModel):
    """A server started for the run (vLLM, llama.cpp), stopped when it ends."""

    startup_timeout_s: PositiveSeconds = 600
    """Seconds to wait for it to answer before the run fails."""
    command: Annotated[str, checked(check_command)]
    """The command that starts it; {id}, {port}, {model_dir} and {key} are filled in."""
    port: int = Field(None, ge=1, le=65535)  # type: ignore[assignment]  # None: unset, never null
    """Its port (default: a free one); base_url's {port} is filled in with it."""
    model_dir: Label = None  # type: ignore[assignment]  # None: unset, never null
    """A local folder of weights, for {model_dir} (relative to this models file)."""

    def recorded(self) -> dict:
        """The block as a run card records it: the start-up wait, then what the file set."""
        return self.model_dump(exclude_none=True)


class ApiBlock(ConfigModel):
    """How an openai-backend entry is asked (any OpenAI-compatible chat API)."""

    key_env: EnvName | None = None
    """The NAME of the environment variable that holds the key (never the key itself); unset,
    no key is sent: a local server that takes none, started by ocg or not."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight at once."""
    timeout_s: PositiveSeconds = 120
    """Seconds one request may take."""
    max_retries: int = Field(6, ge=0)
    """Retries of a failed request."""
    temperature: NonNegative | None = 0
    """Sampling temperature (0: greedy; null omits it, for models that reject it)."""
    backoff_s: Seconds = 1.0
    """The first retry's wait, doubled each time."""
    token_param: Label = "max_tokens"
    """The request's token-budget parameter (max_completion_tokens for o1-style models)."""
    max_retry_wait_s: Seconds = 300
    """The longest wait between retries."""
    base_url: Annotated[str, checked(check_url), Field(json_schema_extra={"pattern": URL_PATTERN})]
    """The API's URL (http or https; no user:password@ in it)."""
    server: ServerBlock = None  # type: ignore[assignment]  # None: unset, never null
    """A server started for the run (then no key is needed)."""
    takes_seed: bool = True
    """false: the API rejects `seed`; none is sent, and a sampled run's card says so."""
    regex_param: Literal["structured_outputs", "guided_regex"] = "structured_outputs"
    """How a constrained condition's regex is sent: vLLM >= 0.10.2's structured_outputs, or the
    guided_regex of older vLLM."""

    def recorded(self) -> dict:
        """The block as a run card records it: every field up to base_url, then those the file
        set (a card written before takes_seed and regex_param existed reads the same)."""
        newer = {"takes_seed", "regex_param"} - self.model_fields_set
        data = self.model_dump(exclude={*newer, *(() if self.server else ("server",))})
        return {**data, **({"server": self.server.recorded()} if self.server else {})}


class ReplayBlock(ConfigModel):
    """The replay backend: answers from a file, else from the synthetic writer."""

    file: Label = None  # type: ignore[assignment]  # None: unset, never null
    """JSONL, one {"instance_id", "answer"} (and "sample") per line; relative to the models file;
    `ocg-data:NAME` is a file ocg ships (ocg/data/NAME), wherever ocg is installed."""
    key: Literal["instance_id", "set_id"] = "instance_id"
    """instance_id: an answer per instance (and sample); set_id: an answer per concept set (the
    line's `set_id` or `id`), given to every instance and sample of the set: sentences written
    for another prompt, e.g. a reference's (ocg/data/README.md)."""
    model: Label = None  # type: ignore[assignment]  # None: unset, never null
    """Only the file's lines whose `model` is this (a file of several models' answers)."""
    rates: Annotated[
        dict[str, Any], checked(check_rates), Field(json_schema_extra=RATES_SCHEMA)
    ] = None  # type: ignore[assignment]  # None: unset, never null
    """The synthetic writer's rates {reorder, drop, inflect, repeat, degenerate}, each 0-1."""

    def recorded(self) -> dict:
        """The block as a run card records it: what the file set (its file made absolute)."""
        return self.model_dump(exclude_none=True)


class ModelDefaults(ConfigModel):
    """Every field of an entry but its id: a models file's `defaults:` changes them for its entries."""

    backend: BackendName = "transformers"
    """transformers, openai (an OpenAI-compatible chat API) or replay (no model runs)."""
    revision: Label = "main"
    """Hub revision (branch, tag or commit); only a full commit hash pins the weights."""
    quantization: Quantization = "4bit"
    """none, 4bit (bitsandbytes NF4, as QLoRA) or 8bit; an entry that sets dtype says it too."""
    dtype: Dtype = "bfloat16"
    """The compute dtype (with 4bit too)."""
    attention: Attention = "auto"
    """auto (transformers' choice), sdpa or eager; changes answers in bf16."""
    trust_remote_code: bool = False
    """Run the model repository's own code."""
    max_new_tokens: int = Field(128, ge=1, le=MAX_NEW_TOKENS)
    """The generation budget per answer."""
    batch_size: AutoOrPositive = 32
    """Prompts per batch, or auto: the largest that fits on CUDA (32 elsewhere)."""
    pad_multiple: AutoOrPositive = "auto"
    """Prompts padded to a multiple of it; auto: 8 on CUDA, 1 elsewhere."""
    seed: int = Field(42, ge=0, le=SEED_MAX)
    """The fixed seed (sent to APIs that take one)."""
    answer_extraction: Extraction = "plain"
    """plain (the raw text), think (<think>...</think> answer) or marco_o1 (<Output>...)."""
    system_mode: SystemMode = "auto"
    """auto (probe the chat template), system, or folded (system text before the first turn)."""
    system_prompt: SystemPrompt = "paper"
    """paper (params/templates.yaml's) or template_default (no system turn)."""
    prompt_date: Date = DEFAULT_PROMPT_DATE
    """The date every chat template sees (YYYY-MM-DD; quoted or not)."""
    decoding: Decoding = "greedy"
    """greedy, or model_defaults (the model's generation_config.json acts too)."""
    generation_overrides: Annotated[dict[str, Any], checked(check_generation_overrides)] = {}
    """transformers GenerationConfig settings applied on top, e.g. {repetition_penalty: 1.1}."""
    batch_check: int = Field(16, ge=0)
    """Instances regenerated at batch size 1 to measure what batching changed (0: none)."""
    paper_name: Label | None = None
    """The model's name in the paper's tables."""
    paper_id: Label | None = None
    """The id the paper's Table 5 prints (default: id)."""
    base_model: Name | None = None
    """For reasoning models: the entry of the model it was built on (Table 7)."""
    api: ApiBlock = None  # type: ignore[assignment]  # None: unset, never null
    """openai backend only: how the API is asked."""
    replay: ReplayBlock = None  # type: ignore[assignment]  # None: unset, never null
    """replay backend only: the file or the synthetic writer's rates."""
    reference: Label | None = None
    """A reference, not a model under study: where its answers come from, shown beside its
    rows. It answers only the `original` condition (its sentences were asked without an order;
    docs/METHODS.md, "Reference rows")."""


class _Entry(ModelDefaults):
    """What every entry holds beyond the defaultable fields: its id and name, and how a run card
    records it."""

    id: Annotated[Label, checked(check_id)]
    """Hub id, local folder (absolute, ./, ../, ~, or a folder beside the file: relative to this
    models file, checked when it is read), or embedded:NAME (a model shipped in a Python package)."""
    name: SkipJsonSchema[str]
    """The entry's name in its file (the key above it, never written inside an entry)."""

    @model_validator(mode="after")
    def _paper_id(self) -> Any:
        """paper_id: the id where the entry says none."""
        return self if self.paper_id else self.model_copy(update={"paper_id": self.id})

    @model_validator(mode="after")
    def _reference_name(self) -> Any:
        """A `ref-` name and `reference:` go together: the pages, tables and tests tell a
        reference by either, so one without the other would be counted as the wrong kind."""
        if self.name.startswith(REFERENCE_PREFIX) and not self.reference:
            raise _refuse(
                ".reference",
                f"missing: a name starting {REFERENCE_PREFIX!r} marks a reference entry; "
                "add reference: SOURCE (where its sentences come from), or rename the entry",
            )
        if self.reference and not self.name.startswith(REFERENCE_PREFIX):
            raise _refuse(
                "",
                f"a reference entry's name starts with {REFERENCE_PREFIX!r} (the pages and "
                f"tables tell references by it): rename it {REFERENCE_PREFIX}{self.name}",
            )
        return self

    def recorded(self) -> dict:
        """The entry as a run card's `spec` records it (every field, in the same order for every
        backend; api and replay as {} where the entry has none)."""
        rest = self.model_dump(exclude={"name", "id", "api", "replay"})
        return {
            "name": self.name,
            "id": self.id,
            **rest,
            "api": self.api.recorded() if self.api else {},
            "replay": self.replay.recorded() if self.replay else {},
        }


def _refuse(at: str, problem: str) -> PydanticCustomError:
    """A rule's refusal, addressed `at` below the entry (file_model.validate words it)."""
    return PydanticCustomError("ocg", "{problem}", {"problem": problem, "at": at})


def _no_block(entry: _Entry, block: str, backend: str) -> None:
    if getattr(entry, block) is not None:
        raise _refuse(
            f".{block}",
            f"only the {backend} backend takes an {block} block".replace("an replay", "a replay"),
        )


class TransformersEntry(_Entry):
    """A causal LM run in process (the default backend): every defaultable field applies."""

    backend: Literal["transformers"] = "transformers"

    @model_validator(mode="after")
    def _blocks(self) -> TransformersEntry:
        _no_block(self, "replay", "replay")
        _no_block(self, "api", "openai")
        return self


class OpenAIEntry(_Entry):
    """An OpenAI-compatible chat API: weights, dtype, attention and batching are the provider's
    business (a file's `defaults:` do not reach these fields: the loader leaves them out)."""

    backend: Literal["openai"]
    quantization: Quantization = "none"
    dtype: Dtype = "auto"
    attention: Attention = "auto"
    batch_check: int = Field(0, ge=0)  # a server's batching is its own

    @model_validator(mode="after")
    def _rules(self) -> OpenAIEntry:
        if self.quantization != "none":
            raise _refuse(".quantization", "an API model cannot be quantized here")
        if self.attention != "auto":
            raise _refuse(
                ".attention",
                "an API model's attention is the server's; this field is for transformers",
            )
        _no_block(self, "replay", "replay")
        api = self.api
        if api is None:
            raise _refuse(
                ".api", "missing: the openai backend needs api.base_url (and api.key_env for a key)"
            )
        if api.server is not None:
            if "{key}" in api.server.command and not api.key_env:
                raise _refuse(
                    ".api.server.command",
                    "uses {key}, but api.key_env names no variable to fill it from",
                )
        elif "{port}" in api.base_url:
            raise _refuse(
                ".api.base_url", "{port} is only filled in when api.server starts a server"
            )
        return self


class ReplayEntry(_Entry):
    """Answers replayed from a file, or written by the synthetic writer: nothing runs (no weights,
    no decoding, no batching; a file's `defaults:` do not reach these fields)."""

    backend: Literal["replay"]
    quantization: Quantization = "none"
    dtype: Dtype = "auto"
    attention: Attention = "auto"
    batch_check: int = Field(0, ge=0)
    replay: ReplayBlock = ReplayBlock()

    @field_validator("batch_check")
    @classmethod
    def _no_check(cls, value: int) -> int:
        """Nothing is batched: there is no batch-1 check to run (whatever the entry says)."""
        return 0

    @model_validator(mode="after")
    def _rules(self) -> ReplayEntry:
        for key, fixed in (("quantization", "none"), ("dtype", "auto"), ("attention", "auto")):
            if getattr(self, key) != fixed:
                raise _refuse(f".{key}", f"a replay entry replays answers; {key} does not apply")
        if self.replay.key != "instance_id" and not self.replay.file:
            raise _refuse(".replay.key", "answers per concept set need replay.file")
        _no_block(self, "api", "openai")
        return self


ENTRY_CLASSES: dict[str, type[TransformersEntry | OpenAIEntry | ReplayEntry]] = {
    "transformers": TransformersEntry,
    "openai": OpenAIEntry,
    "replay": ReplayEntry,
}
"""Each backend's entry class (ocg/generation/backends/__init__.py pairs each with its backend)."""
FIXED_BY_BACKEND = {
    backend: {"quantization", "dtype", "attention", "batch_check"}
    for backend in ("openai", "replay")
}
"""The fields a file's `defaults:` leave alone in each backend's entries (their own defaults)."""


class ModelEntry(_Entry):  # noqa: D101 - the schema's class; the name is the union's below
    """One model ocg can run: an entry of a models file, as loaded (its name, the file's
    `defaults:` under it, an api or replay entry's own defaults, paper_id filled in)."""


# An entry as a file writes it: the JSON Schema's view (a file's `defaults:` may name the backend,
# so an entry alone does not say which class it is); never loaded as such.
EntryFields = ModelEntry


def _backend_of(value: Any) -> str:
    return value.get("backend", "transformers") if isinstance(value, dict) else value.backend


# The name ModelEntry: the class's in the schema, this union's in code (type checkers: the class's)
ModelEntry = Annotated[  # type: ignore[misc,assignment]
    Annotated[TransformersEntry, Tag("transformers")]
    | Annotated[OpenAIEntry, Tag("openai")]
    | Annotated[ReplayEntry, Tag("replay")],
    Discriminator(_backend_of),
]
"""One model ocg can run: an entry of a models file, as loaded (its name, the file's `defaults:`
under it, its backend's own defaults, paper_id filled in), one class per backend."""
ENTRY_TYPES = tuple(ENTRY_CLASSES.values())
"""For isinstance: every entry class."""


class ModelsFile(ConfigModel):
    """A models file: entries, optionally over those of the file it extends."""

    extends: Label = None  # type: ignore[assignment]  # None: unset, never null
    """Another models file (relative to this one) whose entries this file adds to."""
    defaults: ModelDefaults = None  # type: ignore[assignment]  # None: unset, never null
    """Field values for this file's entries where they are silent."""
    models: Annotated[dict[str, EntryFields], Field(json_schema_extra=NAMES_AS_KEYS)]
    """The entries, by name (the name a run or sweep file lists)."""
