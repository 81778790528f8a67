"""Generate answers for one model over the instances: planned batches, resumable, with a run card.

The batch plan is fixed by the instance list: prompts sorted by token length (longest first,
ties by instance id) and cut into batches of the model's batch size. A resumed run forms the
same batches, regenerates only batches with missing ids, and writes only the missing ids, so
its answers equal an uninterrupted run's (greedy outputs depend on batch composition).
With repeated samples (`samples`, `sampling`: ocg/generation/sampling.py) each sample runs the
same plan, every record carries its `sample`, and a batch is seeded from the sample's seed and
its first instance id, so a resumed run draws what an uninterrupted one would have.

This module prepares a run (instances, prompts, checks, the run card: a RunState,
ocg/generation/run_state.py); answering.py generates what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ..config.file_model import validate
from ..config.model_registry import MODELS_FILE, get_model
from ..config.models_file import ENTRY_TYPES, ModelEntry
from ..config.requests import GenerateRequest
from ..core.arguments import positive_int
from ..core.errors import OcgInputError
from ..core.files import refuse_link
from ..core.layout import ModelGenerations
from ..core.lock import exclusive
from ..core.provenance import provenance
from ..data import GENERATE_CONDITIONS, ids_hash, load_templates
from ..data.instances import PERMUTATION_RULE, PERMUTATION_SEED
from ..records import ProvenanceBlock, RunCard, RunSettings, RunStatus, Selection
from .answer_store.completeness import card_samples, tally_stores
from .answer_store.store import GenerationStore, missing_prompts
from .answering import answer_todo, check_batch_invariance
from .backends import Backend, backend_class, make_backend, make_prompts
from .backends.batch_auto import resolve_batch_size
from .backends.chat import prompt_sha256
from .backends.constrained import card_block as constrained_card
from .ordered_grammar import instance_grammars
from .run_card import (
    card_settings,
    check_compatible,
    check_grammars,
    check_prompts,
    close_stale_runs,
    now_utc,
)
from .run_state import RunState, answers_to_do
from .sampling import card_block, check_sampling
from .selection import select_instances
from .servers.server import server_for_run

__all__ = [
    "check_batch_invariance",
    "generate",
    "generate_request",
    "run_generation",
    "selection",
]


def selection(request: GenerateRequest) -> Selection:
    """How the instances were selected, as the run card's `selection` records it."""
    asked = {
        "subset_k": request.subset_k,
        "dataset": str(Path(request.dataset).resolve()) if request.dataset else None,
        "template_ids": None if request.template_ids is None else list(request.template_ids),
    }
    if request.permutations is not None:  # recorded only when sampled: a full run's card as it was
        asked.update(
            permutations=request.permutations,
            permutation_seed=PERMUTATION_SEED,
            permutation_rule=PERMUTATION_RULE,
        )
    return Selection.model_validate(asked)


def _listed(value: object) -> object:
    """A tuple or range given for a list field, as the list it stands for (other values as given:
    validation names them)."""
    return list(value) if isinstance(value, (tuple, range)) else value


def _text(value: object) -> object:
    return str(value) if isinstance(value, Path) else value


def _conditions_for(spec: ModelEntry, conditions) -> list:
    """The conditions asked (None: the default): a reference answers only the condition without
    an order (docs/METHODS.md, "Reference rows"); any other asked of it is refused."""
    from ..config.models_file import REFERENCE_CONDITION

    if conditions is None:
        return [REFERENCE_CONDITION] if spec.reference else list(GENERATE_CONDITIONS)
    other = [c for c in conditions if c != REFERENCE_CONDITION]
    if spec.reference and other:
        raise OcgInputError(
            "conditions",
            f"{spec.name} is a reference: it answers only {REFERENCE_CONDITION!r}, not {other}",
        )
    return list(conditions)


def generate_request(
    model: str | ModelEntry,
    *,
    conditions: tuple | list | None = None,
    subset_k: int | None = None,
    template_ids: object = None,
    dataset: str | Path | None = None,
    out_dir: str | Path | None = None,
    batch_size: int | None = None,
    models_file: str | Path = MODELS_FILE,
    progress: bool = True,
    permutations: int | None = None,
    samples: int = 1,
    sampling: dict | None = None,
    batch_check: int | None = None,
) -> GenerateRequest:
    """The GenerateRequest these keywords ask, checked (`model`: an entry, or its name in
    `models_file`; `out_dir`: the generations folder): which instances (`permutations`: a seeded
    sample of that many per concept set, None: all), where the answers go, the batch size, and
    `samples` per instance (more than one needs `sampling`: {temperature, top_p})."""
    # not an entry: its name (anything else is get_model's to refuse, as ever)
    spec = model if isinstance(model, ENTRY_TYPES) else get_model(cast(str, model), models_file)
    conditions = _conditions_for(spec, conditions)
    if batch_check is not None and (not isinstance(batch_check, int) or batch_check < 0):
        raise OcgInputError("batch_check", f"got {batch_check!r}; expected 0 or more")
    positive_int("batch_size", batch_size, nullable=True)
    samples, checked_sampling = check_sampling("", samples, sampling)
    asked = {
        "model": spec,
        "conditions": list(conditions),
        "subset_k": subset_k,
        "permutations": permutations,
        "template_ids": _listed(template_ids),
        "dataset": _text(dataset),
        "generations_dir": _text(out_dir),
        "batch_size": batch_size,
        "samples": samples,
        "sampling": checked_sampling,
        "batch_check": batch_check,
        "progress": progress,
    }
    return validate(GenerateRequest, asked, "generate:")


def generate(
    model: str | ModelEntry,
    *,
    conditions: tuple | list | None = None,
    subset_k: int | None = None,
    template_ids: object = None,
    dataset: str | Path | None = None,
    out_dir: str | Path | None = None,
    batch_size: int | None = None,
    models_file: str | Path = MODELS_FILE,
    progress: bool = True,
    permutations: int | None = None,
    samples: int = 1,
    sampling: dict | None = None,
    batch_check: int | None = None,
) -> Path:
    """Generate (or resume) one model's answers; returns its output directory. The keywords are
    generate_request's (its docstring says what each selects)."""
    request = generate_request(
        model,
        conditions=conditions,
        subset_k=subset_k,
        template_ids=template_ids,
        dataset=dataset,
        out_dir=out_dir,
        batch_size=batch_size,
        models_file=models_file,
        progress=progress,
        permutations=permutations,
        samples=samples,
        sampling=sampling,
        batch_check=batch_check,
    )
    return run_generation(request)


def run_generation(request: GenerateRequest) -> Path:
    """Generate (or resume) the request's answers; returns the model's output directory."""
    spec = request.model
    if request.batch_check is not None:
        if request.batch_check < 0:
            raise OcgInputError("batch_check", f"got {request.batch_check!r}; expected 0 or more")
        if spec.batch_check:  # a run resizes the check of an entry that has one, adds none
            spec = spec.model_copy(update={"batch_check": request.batch_check})
    positive_int("batch_size", request.batch_size, nullable=True)
    samples, sampling = check_sampling(
        "", request.samples, request.sampling.model_dump() if request.sampling else None
    )
    conditions = list(request.conditions)
    instances = select_instances(
        request.dataset,
        conditions,
        request.subset_k,
        request.template_ids,
        permutations=request.permutations,
    )
    if instances.empty:
        raise OcgInputError("instances", "the selection holds no instance")
    folder = ModelGenerations.of(spec.name, request.generations_dir)
    # ocg's own folder and stores, never a link's target (docs/METHODS.md, "What ocg refuses")
    refuse_link(
        folder.folder,
        folder.run_card,
        *(folder.store(c) for c in conditions),
        *(folder.store(c, prompts=True) for c in conditions),
    )
    with exclusive(folder.folder):
        return _generate_locked(
            spec, instances, folder.folder, _Asked(request, conditions, samples, sampling)
        )


@dataclass(frozen=True)
class _Asked:
    """The request, with its conditions, samples and sampling as checked for this run."""

    request: GenerateRequest
    conditions: list[str]
    samples: int
    sampling: dict | None


def _readd_prompts(store: GenerationStore, rows, rendered: dict, hashes: dict) -> None:
    """Put back the prompts the store's records name and its prompt file lost (removed or edited):
    those rendered now with the very sha256 a record names (check_prompts compared them)."""
    lost = missing_prompts(store.path)
    back = {hashes[i]: rendered[i] for i in rows["instance_id"] if hashes[i] in lost}
    if back:
        store.prompts.cut_torn()
        store.add_prompts(back.values())
        print(
            f"{store.prompts.path}: put back {len(back)} of {len(lost)} lost prompt(s), each rendered again "
            "with the sha256 its records name",
            flush=True,
        )


def _render(prompts, rows: dict, system_prompt: str | None) -> tuple[dict, dict]:
    """Every instance's prompt as the entry's backend takes it, and its sha256."""
    rendered, hashes = {}, {}
    for cond_rows in rows.values():
        for iid, msgs in zip(cond_rows["instance_id"], cond_rows["messages"]):
            messages = json.loads(msgs)
            if system_prompt is None:
                messages = [m for m in messages if m["role"] != "system"]
            rendered[iid] = prompts.render(messages)
            hashes[iid] = prompt_sha256(rendered[iid])
    return rendered, hashes


def _grammars(spec: ModelEntry, templates, rows: dict) -> dict:
    """The constrained conditions' expressions per condition and instance, for the backend that
    is to force them (refused where it cannot)."""
    grammars = instance_grammars(templates, rows)
    if grammars and not getattr(backend_class(spec), "applies_grammars", False):
        raise OcgInputError(
            "conditions",
            f"{sorted(grammars)} force a grammar at decoding time; the "
            f"{spec.backend} backend of {spec.name} cannot apply one (transformers and openai can)",
        )
    return grammars


def _first_card(
    spec: ModelEntry,
    backend: Backend,
    old: RunCard,
    ask: _Asked,
    *,
    settings: RunSettings,
    conditions: Iterable[str],
    samples: int,
    grammars: dict,
    ids_sha: dict,
) -> RunCard:
    """This run's card before it writes anything: the old card's instances, selections, runs
    (a stale `running` one closed) and constrained conditions, with this run's added."""
    sampling = ask.sampling
    honoured = backend.kind != "openai" or spec.api.takes_seed
    return RunCard(
        model=spec.name,
        status=RunStatus.RUNNING,
        spec=spec.recorded(),
        settings=settings,
        instances={**old.instances, **ids_sha},
        selection={**old.selection, **{c: selection(ask.request) for c in conditions}},
        backend=backend.card(),
        provenance=ProvenanceBlock.model_validate(provenance()),
        runs=close_stale_runs(old.runs),
        sampling=card_block(spec.seed, samples, sampling, honoured) if sampling else None,
        constrained={
            **(old.constrained or {}),
            **{c: constrained_card(g) for c, g in grammars.items()},
        }
        or None,
    )


def _generate_locked(spec, instances, model_dir: Path, ask: _Asked) -> Path:
    """Prepare the run (prompts rendered, the folder's card and stores checked), then generate what
    is missing; with nothing missing, only the card is written, saying so."""
    conditions = ask.conditions
    stores = {c: GenerationStore(ModelGenerations(model_dir).store(c)) for c in conditions}
    rows = {c: instances[instances.condition == c].reset_index(drop=True) for c in conditions}
    ids_sha = {c: ids_hash(rows[c]) for c in conditions}
    templates = load_templates()
    grammars = _grammars(spec, templates, rows)
    system_prompt = templates.system_prompt if spec.system_prompt == "paper" else None
    prompts = make_prompts(spec)  # the tokenizer (or chat messages) only
    rendered, hashes = _render(prompts, rows, system_prompt)
    card_path = ModelGenerations(model_dir).run_card
    # a number before any backend exists (`auto`: estimated, or the card's on resume)
    batch = resolve_batch_size(spec, prompts, rendered, card_path, asked=ask.request.batch_size)
    forced = {i: g for per in grammars.values() for i, g in per.items()}
    backend = make_backend(  # complete, its weights loaded later
        spec, batch, instances, ask.sampling, prompts, grammars=forced
    )
    settings = card_settings(spec, backend, system_prompt)
    old = check_compatible(card_path, settings, ids_sha)
    for cond, store in stores.items():
        check_prompts(store, hashes)
        check_grammars(store, grammars.get(cond, {}))
        _readd_prompts(store, rows[cond], rendered, hashes)
    old = old or RunCard()
    # a directory's samples grow: those asked before stay asked
    samples = max(ask.samples, card_samples(old)) if ask.sampling else ask.samples
    state = RunState(
        spec,
        backend,
        stores,
        rows,
        rendered,
        hashes,
        settings,
        card_path,
        _first_card(
            spec,
            backend,
            old,
            ask,
            settings=settings,
            conditions=rows,
            samples=samples,
            grammars=grammars,
            ids_sha=ids_sha,
        ),
        samples,
        ask.request.progress,
    )
    todo = answers_to_do(stores, rows, samples)
    if todo == 0:  # everything asked for is on disk, asked with these prompts and settings
        done = state.card.replace(
            status=RunStatus.COMPLETE,
            checked_utc=now_utc(),
            records=tally_stores(stores, rows, samples),
        )
        if old.model is not None:  # the card of the run that generated them
            done = done.replace(
                backend=old.backend or state.card.backend, provenance=old.provenance
            )
            if getattr(backend, "gone", False):  # a replayed file moved since: its revision
                done = done.replace(
                    settings=settings.replace(resolved_revision=old.settings.resolved_revision)
                )
        state.save(done)
        return model_dir
    run = {
        "conditions": conditions,
        **selection(ask.request).to_json(),
        "n_instances": len(instances),
        "todo": todo,
    }
    with server_for_run(spec, backend, ModelGenerations(model_dir).server_log):
        return answer_todo(state, run)
