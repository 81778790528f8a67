"""The run card's settings, and the checks that keep one output directory to one experiment:
the settings and instance sets already recorded there, and the prompts already asked."""

from __future__ import annotations

from pathlib import Path

from ..config.models_file import ModelEntry
from ..core.clock import utc_stamp
from ..core.errors import OcgInputError
from ..records import RunCard, RunEntry, RunSettings, RunStatus
from ..weights import hub
from .answer_store.store import GenerationStore
from .backends.constrained import not_forced

# Settings that must not change between the runs that fill one output directory. The
# rendered prompts are checked too, record by record (`prompt_sha256`).
SETTINGS_KEYS = (
    "id",
    "revision",
    "resolved_revision",
    "quantization",
    "dtype",
    "attention",
    "max_new_tokens",
    "seed",
    "decoding",
    "generation_overrides",
    "answer_extraction",
    "batch_size",
    "system_prompt",
    "chat_template_sha256",
    "system_mode",
    "prompt_date",
    "bos",
    "template_default_system_prompt",
    "sampling",
    "pad_multiple",
)
# What a key absent from an older run card means, instead of "(not recorded)": a greedy run
# writes no `sampling`; `attention` was transformers' choice before entries could set it.
# `pad_multiple` is written only when prompts are padded beyond the batch's longest (CUDA's default).
ABSENT_MEANS = {"sampling": None, "attention": "auto", "pad_multiple": None}
# How to choose another folder, for every refusal below (a report's kernel raises them too).
ANOTHER_FOLDER = (
    "use another output folder: the run or sweep file's `outputs:` key (e.g. `outputs: "
    "outputs/<run name>`; relative: under OCG_OUTPUTS when set, else the project root), "
    "--out for `ocg generate`, or the OCG_OUTPUTS variable"
)


def card_settings(spec: ModelEntry, backend, system_prompt: str | None) -> RunSettings:
    """What defines this run's results (the run card's `settings`), its keys in this order."""
    settings = {
        "id": spec.id,
        "revision": spec.revision,
        "resolved_revision": backend.resolved_revision(),
        # a branch (`main`) or tag is no pin: the commit it names can move (null: no hub weights)
        "revision_pinned": hub.is_pinned(spec.revision)
        if spec.backend == "transformers" and hub.is_hub_id(spec.id)
        else None,
        "quantization": spec.quantization,
        "dtype": spec.dtype,
        "attention": spec.attention,
        "max_new_tokens": spec.max_new_tokens,
        "seed": spec.seed,
        "decoding": {"transformers": spec.decoding, "replay": "replay"}.get(
            spec.backend, f"temperature={spec.api.temperature if spec.api else None}"
        ),
        "generation_overrides": dict(spec.generation_overrides),
        "answer_extraction": spec.answer_extraction,
        "batch_size": backend.batch_size,
        "system_prompt": system_prompt
        if system_prompt is not None
        else "(none: the template's default)",
        **backend.prompt_settings(),
        **({"sampling": backend.sampling} if backend.sampling else {}),
        # a reference's source, for the page (recorded only for one: other cards read as before)
        **({"reference": spec.reference} if spec.reference else {}),
        **(
            {"pad_multiple": backend.pad_multiple}
            if getattr(backend, "pad_multiple", 1) > 1
            else {}
        ),
    }
    return RunSettings.model_validate(settings)


def _shown(key: str, value: object, entry: dict | None = None) -> str:
    """A setting as a refusal names it: an unpadded run's pad_multiple (recorded only where
    prompts were padded) as what its entry said, `auto` unless it said 1."""
    if key == "pad_multiple" and value is None:
        said = (entry or {}).get("pad_multiple")
        return f"{said or 'auto'} (unpadded)" if entry is not None else "1 (unpadded)"
    return repr(value)


def check_compatible(
    card_path: Path, settings: RunSettings, instances: dict[str, str]
) -> RunCard | None:
    """The old run card, if the new run may add to its directory; else an error saying why."""
    if not card_path.exists():
        return None
    old = RunCard.read(card_path)
    from ..data import load_templates  # which conditions are forced now (params/templates.yaml)

    conditions = load_templates().conditions if instances else {}
    for (
        cond
    ) in instances:  # a condition forced before is forced now, and one free before stays free
        was, now = (
            cond in (old.constrained or {}),
            bool(cond in conditions and conditions[cond].constraint),
        )
        if was != now and (was or cond in old.instances):
            raise OcgInputError(
                f"{card_path}: constrained.{cond}",
                (
                    "this condition was forced to a grammar, and none is built now (its `constraint` left "
                    "params/templates.yaml?)"
                    if was
                    else "this condition was decoded freely, and a grammar is "
                    "built now (a `constraint` added in params/templates.yaml?)"
                )
                + ": one store would hold "
                "forced and free answers; restore the setting or use another output directory",
            )
    for key in SETTINGS_KEYS:
        was_set = old.settings.recorded(key, ABSENT_MEANS.get(key, "(not recorded)"))
        now_set = settings.recorded(key)
        if key == "resolved_revision" and (was_set is None or now_set is None):
            continue  # known only once weights load; checked again then
        if was_set != now_set:
            raise OcgInputError(
                str(card_path),
                f"setting {key!r} was {_shown(key, was_set, old.spec)}, now {_shown(key, now_set)}: these "
                f"generations would mix two settings; {ANOTHER_FOLDER} (or another model name)",
            )
    for cond, ids_sha in instances.items():
        was_sha = old.instances.get(cond)
        if was_sha is not None and was_sha != ids_sha:
            raise OcgInputError(
                str(card_path),
                f"condition {cond!r} holds another instance set "
                f"(ids sha256 {was_sha[:12]}..., now {ids_sha[:12]}...): runs asking other "
                "concept sets, templates or permutations cannot share a directory; "
                f"{ANOTHER_FOLDER}",
            )
    return old


def _check_records(store: GenerationStore, field: str, wanted: dict[str, str], what: str) -> None:
    """Every record already on disk holds in `field` what this run would write there now."""
    for lineno, record in enumerate(
        store.read(store.path, prompts=False), start=1
    ):  # a lost prompt file: re-added after
        want = wanted.get(record["instance_id"])
        if want is not None and record.get(field) != want:
            raise OcgInputError(
                f"{store.path}:{lineno}",
                f"instance {record['instance_id']} was {what}: one "
                f"file would hold two experiments; {ANOTHER_FOLDER}",
            )


def check_prompts(store: GenerationStore, hashes: dict[str, str]) -> None:
    """Every record already on disk was asked exactly the prompt the model would get now."""
    _check_records(
        store,
        "prompt_sha256",
        hashes,
        "asked another prompt than the one rendered now (template, "
        "suffix, one-shot, system prompt, chat template or date changed)",
    )


def check_grammars(store: GenerationStore, grammars: dict[str, str] | None) -> None:
    """Every record on disk was decoded as this run decodes now: forced to the expression built
    now (ordered_grammar.py) and in it (constrained.py, check_forced), or free when `grammars` is
    empty or None (the condition has no constraint now; a forced one has an expression per instance)."""
    grammars = grammars or None
    forced = []
    for lineno, record in enumerate(
        store.read(store.path, prompts=False), start=1
    ):  # prompts are not needed
        iid, had = record["instance_id"], record.get("grammar")
        want = None if grammars is None else grammars.get(iid)
        if had is None and grammars is None:
            continue
        where = f"{store.path}:{lineno}"
        if grammars is None:
            raise OcgInputError(
                where,
                f"instance {iid} was forced to a grammar, and none is built now (the "
                "condition's `constraint` left params/templates.yaml?): one file would hold forced "
                "and free answers; restore the constraint or use another output directory",
            )
        if want is None:
            continue  # not asked by this run (its instance set is checked with the run card)
        if had is None:
            raise OcgInputError(
                where,
                f"instance {iid} was decoded freely, and a grammar is built now (a "
                "`constraint` added?): one file would hold forced and free answers; use another "
                "output directory",
            )
        if had != want:
            raise OcgInputError(
                where,
                f"instance {iid} was forced to another grammar than the one built now (the "
                "grammar rule or the lexicon changed): one file would hold two experiments; use "
                "another output directory",
            )
        forced.append(((lineno, iid), had, record.get("raw"), record.get("finish_reason")))
    bad = not_forced(forced)
    if bad:
        (lineno, iid) = bad[0]
        raise OcgInputError(
            f"{store.path}:{lineno}",
            f"instance {iid}'s answer is not in its grammar: it was never "
            f"forced (a server that ignored the regex, stored by an ocg that did not check; {len(bad)} "
            "such answer(s) in this file); use another output directory",
        )


def now_utc() -> str:
    """The time now, as the run card records it."""
    return utc_stamp()


def close_stale_runs(runs: list[RunEntry]) -> list[RunEntry]:
    """A run still marked running was killed (its lock is free now): say so (new entries; the
    card that was read stays as it was)."""
    return [
        r.replace(
            status=RunStatus.INTERRUPTED, note="the process ended without finishing (killed?)"
        )
        if r.status == RunStatus.RUNNING
        else r
        for r in runs
    ]
