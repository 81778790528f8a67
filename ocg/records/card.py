"""A model's run card (run_card.json beside its generations, written by ocg/generation/): what the
folder was asked, with which settings and backend, and how each run that filled it went.

Its blocks are typed (records/block.py) with the keys the writers put there: the settings
(ocg/generation/run_card.py: card_settings), the backend (each backend's `card()`), each run
(ocg/generation/answering.py), each condition's selection (run_generation.py: selection), the
sampling (sampling.py: card_block), the records' tally (answer_store/completeness.py), the
constrained conditions (backends/constrained.py: card_block) and the provenance
(core/provenance.py). A key a block does not know is kept, and each block is written with its
keys in the order read, so a card read and written again is the same JSON."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, Strict

from .block import Block
from .model import Number, RecordModel, Vocabulary


class RunStatus(Vocabulary):
    """How a model's generation went: the run card's `status`, and each of its `runs`."""

    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # killed, or a run still marked running whose process is gone
    UNKNOWN = "unknown"  # a card from before the status was recorded


class RunSettings(Block):
    """What defines the folder's results (the card's `settings`), checked on every run that adds
    to it (ocg/generation/run_card.py: SETTINGS_KEYS). Keys written only for some runs:
    `template_date_string` (a tokenizer's prompts), `sampling` (sampled runs), `reference` (a
    reference entry), `pad_multiple` (prompts padded beyond the batch's longest)."""

    id: str | None = None
    revision: str | None = None
    resolved_revision: str | None = None  # known once the weights load
    revision_pinned: bool | None = None  # null: no hub weights
    quantization: str | None = None
    dtype: str | None = None
    attention: str | None = None
    max_new_tokens: int | None = None
    seed: int | None = None
    decoding: str | None = None
    generation_overrides: dict[str, Any] | None = None
    answer_extraction: str | None = None
    batch_size: int | None = None
    system_prompt: str | None = None
    # how the prompts are shaped (a backend's prompt_settings())
    chat_template_sha256: str | None = None
    system_mode: str | None = None
    template_default_system_prompt: str | None = None
    prompt_date: str | None = None
    template_date_string: str | None = None
    bos: str | None = None
    sampling: dict[str, Any] | None = None  # temperature, top_p
    reference: str | None = None  # a reference's source
    pad_multiple: int | None = None


class BackendBlock(Block):
    """How the backend ran (the card's `backend`, its `card()`): the keys every backend writes,
    then those of transformers, of the openai backend and of replay."""

    backend: str | None = None  # its kind: transformers, openai or replay
    resolved_revision: str | None = None
    chat_template_sha256: str | None = None
    system_mode: str | None = None
    template_default_system_prompt: str | None = None
    prompt_date: str | None = None
    template_date_string: str | None = None
    bos: str | None = None
    planned_batch_size: int | None = None
    # transformers
    embedded_source: dict[str, Any] | None = None  # a GGUF file's weights
    working_batch_size: int | None = None
    # how `batch_size: auto` became the planned size (the estimate's figures, or the size
    # resumed from this card); null: the entry named one
    batch_size_auto: dict[str, Any] | None = None
    pad_multiple: int | None = None
    gpu: str | None = None
    model_dtype: str | None = None  # these from here once the weights loaded
    attention: str | None = None  # what `auto` resolved to
    loaded_in_4bit: bool | None = None
    loaded_in_8bit: bool | None = None
    device: str | None = None
    load_seconds: Number | None = None
    eos_token_ids: list[int] | None = None
    generation_config: dict[str, Any] | None = None
    # openai
    base_url: str | None = None
    key_env: str | None = None  # the variable's name, never its value
    temperature: Number | None = None
    concurrency: int | None = None
    models_reported_by_server: list[str] | None = None
    server: dict[str, Any] | None = None
    retried_requests: int | None = None
    retry_wait_s: Number | None = None
    api_notes: dict[str, Any] | None = None
    # replay
    source: str | None = None
    file_sha256: str | None = None
    rates: dict[str, Any] | None = None
    note: str | None = None


class Selection(Block):
    """How a condition's instance set was chosen (the card's `selection`, per condition; each run
    records it too). The permutation keys are written only when permutations were sampled."""

    subset_k: int | None = None
    dataset: str | None = None  # a built dataset folder; null: built in memory
    template_ids: list[int] | None = None  # null: every template
    permutations: int | None = None
    permutation_seed: int | None = None
    permutation_rule: str | None = None


class BatchCheck(Block):
    """A run's batch-1 check (ocg/generation/answering.py: check_batch_invariance): a sample of its
    answers regenerated at batch size 1, and those that differ."""

    checked: int = 0
    differ: int = 0
    share_differ: Number | None = None  # null: nothing checked
    instances_differ: list[str] = Field(default_factory=list)
    batched_size: int | None = None
    dtype: str | None = None
    quantization: str | None = None
    note: str | None = None  # a sampled run's: seeding differs too


class RunEntry(Block):
    """One run that filled the folder (the card's `runs`, oldest first): what it asked, how it
    went (`status`), and once it ended, what it wrote and its batch-1 check."""

    started_utc: str | None = None
    conditions: list[str] = Field(default_factory=list)
    # the selection it asked (Selection's keys)
    subset_k: int | None = None
    dataset: str | None = None
    template_ids: list[int] | None = None
    permutations: int | None = None
    permutation_seed: int | None = None
    permutation_rule: str | None = None
    n_instances: int | None = None
    todo: int | None = None  # answers missing when it started
    status: Annotated[RunStatus, Strict(False)] | None = None
    note: str | None = None  # a run found killed
    repaired_torn_bytes: dict[str, Any] | None = None  # condition: bytes cut off a torn store
    written: int | None = None
    seconds: Number | None = None
    new_tokens: int | None = None
    tokens_per_s: Number | None = None
    answers_by_status_and_source: dict[str, int] | None = None
    batch_invariance: BatchCheck | None = None
    error: str | None = None  # a failed or interrupted run's
    finished_utc: str | None = None

    def selection(self) -> Selection:
        """What it asked, as a card's `selection` records it (cards written before selections
        were recorded): the subset, dataset and templates, the permutations where it has them."""
        return Selection.model_validate(
            {
                "subset_k": self.subset_k,
                "dataset": self.dataset,
                "template_ids": self.template_ids,
                **{k: self._value(k) for k in ("permutations", "permutation_seed") if self.has(k)},
            }
        )


class SamplingBlock(Block):
    """Repeated samples (the card's `sampling`; absent for greedy runs, ocg/generation/sampling.py):
    samples per instance, the temperature and top_p asked, each sample's seed and the rule."""

    samples: int = 1
    temperature: Number | None = None
    top_p: Number | None = None
    seeds: list[int] = Field(default_factory=list)
    seeding: str | None = None
    seeds_honoured: bool | None = None  # false: an API that takes no seed


class Tally(Block):
    """A condition's store against what was asked (the card's `records`, per condition)."""

    asked: int = 0
    present: int = 0
    missing: int = 0
    foreign: int = 0  # records not asked (another set, template or condition)
    foreign_examples: list[Any] = Field(default_factory=list)


class ConstrainedBlock(Block):
    """A condition decoded under a grammar (the card's `constrained`, per condition;
    ocg/generation/backends/constrained.py): the library, the lexicon, the rule, and each
    instance's grammar sha256."""

    library: str | None = None
    library_version: str | None = None
    lexicon: str | None = None
    lexicon_version: str | None = None
    grammar_version: int | None = None
    grammar_rule: str | None = None
    grammar_sha256: dict[str, str] = Field(default_factory=dict)  # instance id: sha256


class ProvenanceBlock(Block):
    """Where and with what the run's card was written (ocg/core/provenance.py: provenance)."""

    created_utc: str | None = None
    git: dict[str, Any] | None = None  # commit, dirty
    packages: dict[str, Any] | None = None  # distribution: version
    python: str | None = None
    host: str | None = None
    platform: str | None = None
    # name, vector_extensions, torch_kernels, kernel_caps (core/provenance.py: cpu_kernels)
    cpu: dict[str, Any] | None = None


class RunCard(RecordModel):
    """What a model's generations folder was asked (instances per condition, how they were
    selected), with which settings, and how each run that filled it went.

    Every block is a typed model but `spec`: the models-file entry verbatim, as its
    ModelEntry.recorded() writes it (ocg/config/models_file.py, whose model types it), so it
    stays that JSON object here."""

    WHAT: ClassVar[str] = "a run card"
    FORMAT_VERSION: ClassVar[int | None] = 1
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = (
        "checked_utc",
        "records",
        "sampling",
        "constrained",
    )

    model: str | None = None
    status: Annotated[RunStatus, Strict(False)] = RunStatus.UNKNOWN
    spec: dict[str, Any] = Field(default_factory=dict)  # the models-file entry, verbatim
    settings: RunSettings = Field(default_factory=RunSettings)
    instances: dict[str, str] = Field(default_factory=dict)  # condition: ids sha256
    selection: dict[str, Selection] = Field(default_factory=dict)  # condition: its selection
    backend: BackendBlock = Field(default_factory=BackendBlock)
    provenance: ProvenanceBlock | None = None
    runs: list[RunEntry] = Field(default_factory=list)
    checked_utc: str | None = None  # when a run found everything asked already on disk
    records: dict[str, Tally] | None = None  # condition: asked / present / missing / foreign
    sampling: SamplingBlock | None = None  # absent for greedy runs
    constrained: dict[str, ConstrainedBlock] | None = None  # absent without one

    @property
    def model_id(self) -> str | None:
        return self.settings.id

    @property
    def revision(self) -> str | None:
        """The revision the weights were loaded at (None until they were)."""
        return self.settings.resolved_revision

    @property
    def batch_size_auto(self) -> dict[str, Any] | None:
        """How `batch_size: auto` became the planned size (the estimate's figures, or the size
        resumed from this card), as the backend block records it; None: the entry named one."""
        return self.backend.batch_size_auto

    @property
    def batch_invariance(self) -> BatchCheck | None:
        """The latest run's batch-1 check."""
        return next((r.batch_invariance for r in reversed(self.runs) if r.batch_invariance), None)

    def selection_of(self, condition: str) -> Selection | None:
        """How the instance set of `condition` was chosen: recorded per condition, else the last
        run that asked for it (cards written before selections were recorded)."""
        if condition in self.selection:
            return self.selection[condition]
        for run in reversed(self.runs):
            if condition in run.conditions:
                return run.selection()
        return None
