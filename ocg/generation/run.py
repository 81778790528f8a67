"""Generate answers for one model over the instances: planned batches, resumable, with a run card.

The batch plan is fixed by the instance list: prompts sorted by token length (longest first,
ties by instance id) and cut into batches of the model's batch size. A resumed run forms the
same batches, regenerates only batches with missing ids, and writes only the missing ids, so
its answers equal an uninterrupted run's (greedy outputs depend on batch composition).
With repeated samples (`samples`, `sampling`: ocg/generation/sampling.py) each sample runs the
same plan, every record carries its `sample`, and a batch is seeded from the sample's seed and
its first instance id, so a resumed run draws what an uninterrupted one would have.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from ..data import GENERATE_CONDITIONS, ids_hash, load_templates
from ..data.instances import PERMUTATION_RULE, PERMUTATION_SEED
from ..errors import OcgInputError, check_stop
from ..frames import record_sample
from ..io import refuse_link, write_json_when_full
from ..layout import ModelGenerations
from ..lock import exclusive
from ..models import MODELS_FILE, ModelSpec, get_model
from ..provenance import provenance
from ..records import RunCard, RunStatus
from ..schema import positive_int
from . import constrained
from .backends import make_backend
from .batch_auto import resolve_batch_size
from .chat import prompt_sha256
from .completeness import card_samples, tally_stores
from .constrained import card_block as constrained_card
from .estimate import after_a_batch, batch_check_pace
from .extraction import answer_source, extract_answer, prompt_opens_think
from .invariance import plan_batches
from .ordered_grammar import grammar_sha256, instance_grammars
from .run_card import (
    card_settings,
    check_compatible,
    check_grammars,
    check_prompts,
    close_stale_runs,
    now_utc,
)
from .sampling import card_block, check_sampling
from .selection import select_instances
from .server import server_for_run
from .store import GenerationStore, missing_prompts


def check_batch_invariance(
    backend,
    rendered: dict[str, object],
    raw: dict[str, str],
    n: int,
    seed: int,
    progress: bool = True,
) -> dict:
    """Regenerate a sample at batch size 1; the share of answers that batching changed (sampled
    runs: of sample 0, where a batch of one is also seeded otherwise: see the note)."""
    sample = sorted(random.Random(seed).sample(sorted(raw), min(n, len(raw))))
    differ, t0 = [], time.perf_counter()
    for k, iid in enumerate(tqdm(sample, desc="batch-1 check", unit="inst", disable=not progress)):
        if backend.generate([rendered[iid]], instance_ids=[iid])[0]["raw"] != raw[iid]:
            differ.append(iid)
        if (
            k == 0 and progress and len(sample) > 1
        ):  # its cost, said early (ocg/generation/estimate.py)
            tqdm.write(batch_check_pace(backend.spec.name, time.perf_counter() - t0, len(sample)))
    out = {
        "checked": len(sample),
        "differ": len(differ),
        "share_differ": round(len(differ) / len(sample), 4) if sample else None,
        "instances_differ": differ,
        "batched_size": backend.batch_size,
        "dtype": backend.spec.dtype,
        "quantization": backend.spec.quantization,
    }
    if backend.sampling:
        out["note"] = (
            "sampled: sample 0 regenerated alone, seeded from its own id rather than its "
            "batch's first id, so a difference is seeding as well as batching"
        )
    return out


def generate(
    model: str | ModelSpec,
    conditions=GENERATE_CONDITIONS,
    subset_k: int | None = None,
    template_ids=None,
    dataset: str | Path | None = None,
    out_dir: str | Path | None = None,
    batch_size: int | None = None,
    models_file: str | Path = MODELS_FILE,
    progress: bool = True,
    permutations: int | None = None,
    samples: int = 1,
    sampling: dict | None = None,
) -> Path:
    """Generate (or resume) one model's answers, `samples` per instance (more than one needs
    `sampling`: {temperature, top_p}); returns its output directory. `permutations`: a seeded
    sample of that many permutations per concept set (None: all)."""
    spec = model if isinstance(model, ModelSpec) else get_model(model, models_file)
    positive_int("batch_size", batch_size, nullable=True)
    samples, sampling = check_sampling("", samples, sampling)
    conditions = list(conditions)
    instances = select_instances(
        dataset, conditions, subset_k, template_ids, permutations=permutations
    )
    if instances.empty:
        raise OcgInputError("instances", "the selection holds no instance")
    model_dir = ModelGenerations.of(spec.name, out_dir).folder
    asked = {
        "subset_k": subset_k,
        "dataset": str(Path(dataset).resolve()) if dataset else None,
        "template_ids": None if template_ids is None else list(template_ids),
    }
    if permutations is not None:  # recorded only when sampled: a full run's card is as it was
        asked.update(
            permutations=permutations,
            permutation_seed=PERMUTATION_SEED,
            permutation_rule=PERMUTATION_RULE,
        )
    # ocg's own folder and stores, never a link's target (docs/METHODS.md, "What ocg refuses")
    refuse_link(
        model_dir,
        ModelGenerations(model_dir).run_card,
        *(ModelGenerations(model_dir).store(c) for c in conditions),
        *(ModelGenerations(model_dir).store(c, prompts=True) for c in conditions),
    )
    with exclusive(model_dir):
        return _generate_locked(
            spec, instances, conditions, model_dir, batch_size, progress, asked, samples, sampling
        )


def _grammar_fields(grammar: str | None) -> dict:
    """A constrained answer's record carries the expression it was forced to, and its sha256."""
    return {"grammar": grammar, "grammar_sha256": grammar_sha256(grammar)} if grammar else {}


def _todo(stores, rows, samples: int) -> int:
    """Answers asked and not on disk: (instance, sample) pairs."""
    return sum(
        int((~rows[c]["instance_id"].map(lambda i, s=s, st=st: (i, s) in st.done)).sum())
        for c, st in stores.items()
        for s in range(samples)
    )


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


def _generate_locked(
    spec, instances, conditions, model_dir, batch_size, progress, asked, samples=1, sampling=None
) -> Path:
    stores = {c: GenerationStore(ModelGenerations(model_dir).store(c)) for c in conditions}
    rows = {c: instances[instances.condition == c].reset_index(drop=True) for c in conditions}
    ids_sha = {c: ids_hash(rows[c]) for c in conditions}
    backend = make_backend(
        spec, batch_size, instances, sampling
    )  # tokenizer (or API client) only; weights load later
    templates = load_templates()
    grammars = instance_grammars(templates, rows)  # the constrained conditions' expressions
    if grammars and not getattr(backend, "applies_grammars", False):
        raise OcgInputError(
            "conditions",
            f"{sorted(grammars)} force a grammar at decoding time; the "
            f"{backend.kind} backend of {spec.name} cannot apply one (transformers and openai can)",
        )
    backend.grammars = {i: g for per in grammars.values() for i, g in per.items()}
    system_prompt = templates.system_prompt if spec.system_prompt == "paper" else None
    rendered, hashes = {}, {}
    for cond in conditions:
        for iid, msgs in zip(rows[cond]["instance_id"], rows[cond]["messages"]):
            messages = json.loads(msgs)
            if system_prompt is None:
                messages = [m for m in messages if m["role"] != "system"]
            rendered[iid] = backend.render(messages)
            hashes[iid] = prompt_sha256(rendered[iid])
    card_path = ModelGenerations(model_dir).run_card
    resolve_batch_size(backend, rendered, card_path)  # `auto`: a number, the card's on resume
    settings = card_settings(spec, backend, system_prompt)
    old = check_compatible(card_path, settings, ids_sha)
    for cond, store in stores.items():
        check_prompts(store, hashes)
        check_grammars(store, grammars.get(cond, {}))
        _readd_prompts(store, rows[cond], rendered, hashes)
    old = old or RunCard()
    if sampling:  # a directory's samples grow: those asked before stay asked
        samples = max(samples, card_samples(old))
        honoured = backend.kind != "openai" or spec.api.get("takes_seed", True)
    todo = _todo(stores, rows, samples)
    card = RunCard(
        model=spec.name,
        status=RunStatus.RUNNING,
        spec=spec.as_dict(),
        settings=settings,
        instances={**old.instances, **ids_sha},
        selection={**old.selection, **{c: asked for c in conditions}},
        backend=backend.card(),
        provenance=provenance(),
        runs=close_stale_runs(old.runs),
        sampling=card_block(spec.seed, samples, sampling, honoured) if sampling else None,
        constrained={
            **(old.constrained or {}),
            **{c: constrained_card(g) for c, g in grammars.items()},
        }
        or None,
    )
    if todo == 0:
        card = replace(
            card,
            status=RunStatus.COMPLETE,
            checked_utc=now_utc(),
            records=tally_stores(stores, rows, samples),
        )
        if old.model is not None:  # the card of the run that generated them
            card = replace(card, backend=old.backend or card.backend, provenance=old.provenance)
        card.write(card_path)
        return model_dir  # everything asked for is on disk, asked with these prompts and settings

    with server_for_run(spec, backend, model_dir):
        return _generate_todo(
            spec,
            backend,
            stores,
            rows,
            rendered,
            hashes,
            settings,
            card,
            card_path,
            conditions,
            instances,
            todo,
            asked,
            progress,
            samples,
        )


def _generate_todo(
    spec,
    backend,
    stores,
    rows,
    rendered,
    hashes,
    settings,
    card,
    card_path,
    conditions,
    instances,
    todo,
    asked,
    progress,
    samples,
) -> Path:
    model_dir = card_path.parent
    repaired = {c: n for c, s in stores.items() if (n := s.prepare_for_append())}
    run = {
        "started_utc": now_utc(),
        "conditions": conditions,
        **asked,
        "n_instances": len(instances),
        "todo": todo,
        "status": RunStatus.RUNNING,
        "repaired_torn_bytes": repaired,
    }
    card.runs.append(run)
    card.write(card_path)
    try:
        for (
            cond,
            store,
        ) in (
            stores.items()
        ):  # every prompt this run may ask, one block per store, before any record
            store.add_prompts(rendered[i] for i in rows[cond]["instance_id"])
        written, new_tokens, seconds = _generate_missing(
            spec, backend, stores, rows, rendered, hashes, settings, card_path, progress, samples
        )
        run.update(
            written=written,
            seconds=round(seconds, 2),
            new_tokens=new_tokens,
            tokens_per_s=round(new_tokens / max(seconds, 1e-9), 2),
        )
        counts = {}
        for store in stores.values():
            for r in store.records():
                key = f"{r['answer_status']}/{r.get('answer_source', 'raw')}"
                counts[key] = counts.get(key, 0) + 1
        run["answers_by_status_and_source"] = counts
        if spec.batch_check and backend.batch_size > 1:
            raw = {
                r["instance_id"]: r["raw"]
                for s in stores.values()
                for r in s.records()
                if r["instance_id"] in rendered and not record_sample(r)
            }
            run["batch_invariance"] = check_batch_invariance(
                backend, rendered, raw, spec.batch_check, spec.seed, progress
            )
    except BaseException as exc:
        run.update(
            status=RunStatus.FAILED if isinstance(exc, Exception) else RunStatus.INTERRUPTED,
            finished_utc=now_utc(),
            error=f"{type(exc).__name__}: {str(exc)[:500]}",
        )
        card = replace(card, status=run["status"], backend=backend.card())
        write_json_when_full(
            card_path, card.to_json()
        )  # a full disk still leaves the card `failed`
        raise
    run.update(status=RunStatus.COMPLETE, finished_utc=now_utc())
    replace(
        card,
        status=RunStatus.COMPLETE,
        backend=backend.card(),
        records=tally_stores(stores, rows, samples),
    ).write(card_path)
    return model_dir


def _generate_missing(
    spec, backend, stores, rows, rendered, hashes, settings, card_path, progress, samples=1
):
    bar = tqdm(
        total=_todo(stores, rows, samples),
        unit="inst",
        desc=spec.name,
        disable=not progress,
        smoothing=0.1,
    )
    t_start, new_tokens, written, checked_revision = time.perf_counter(), 0, 0, False
    paced = None  # (time, written) after the first batch; True once the projection is said
    for cond, store in stores.items():
        ids = list(rows[cond]["instance_id"])
        plan = plan_batches(
            ids, backend.prompt_lengths([rendered[i] for i in ids]), backend.batch_size
        )
        table = list(
            rows[cond].itertuples(index=False)
        )  # rows by position: .iloc took 0.4 ms a row (ocg_overhead.py)
        for sample, (batch_index, positions) in (
            (s, b) for s in range(samples) for b in enumerate(plan)
        ):
            missing = {ids[p] for p in positions if (ids[p], sample) not in store.done}
            if not missing:
                continue
            outputs = backend.generate(
                [rendered[ids[p]] for p in positions],
                instance_ids=[ids[p] for p in positions],
                sample=sample,
            )
            constrained.check_forced(
                spec, backend, [ids[p] for p in positions], outputs
            )  # before any is written
            if not checked_revision:  # weights are loaded now: the resolved revision is known
                check_compatible(
                    card_path, dict(settings, resolved_revision=backend.resolved_revision()), {}
                )
                settings["resolved_revision"] = backend.resolved_revision()
                checked_revision = True
            records = []
            for p, out in zip(positions, outputs):
                row = table[p]
                prompt = rendered[row.instance_id]
                opens_think = isinstance(prompt, str) and prompt_opens_think(prompt)
                answer, status = extract_answer(out["raw"], spec.answer_extraction, opens_think)
                records.append(
                    {
                        "instance_id": row.instance_id,
                        **({"sample": sample} if backend.sampling else {}),
                        "model": spec.name,
                        "condition": cond,
                        "template_id": int(row.template_id),
                        "set_id": row.set_id,
                        "perm_index": int(row.perm_index),
                        "concepts": list(row.concepts),
                        "pos_pattern": row.pos_pattern,
                        "prompt": prompt,
                        "prompt_sha256": hashes[row.instance_id],
                        "answer": answer,
                        "answer_status": status,
                        "answer_source": answer_source(out["raw"], spec.answer_extraction),
                        **out,
                        **_grammar_fields(backend.grammars.get(row.instance_id)),
                        "batch_index": batch_index,
                        "planned_batch_size": len(positions),
                        "system_mode": backend.system_mode,
                        "time_utc": now_utc(),
                    }
                )
            n = store.append(records)
            written += n
            new_tokens += sum(
                r["completion_tokens"] or 0 for r in records if r["instance_id"] in missing
            )
            elapsed = max(time.perf_counter() - t_start, 1e-9)
            bar.update(n)
            bar.set_postfix(inst_s=f"{written / elapsed:.2f}", tok_s=f"{new_tokens / elapsed:.1f}")
            if (
                progress and paced is not True and bar.total > written
            ):  # the cost, said early (estimate.py)
                if paced is not None:
                    tqdm.write(
                        after_a_batch(
                            spec.name,
                            written - paced[1],
                            time.perf_counter() - paced[0],
                            bar.total - written,
                            min(spec.batch_check, bar.total),
                            backend.batch_size,
                        )
                    )
                paced = True if paced else (time.perf_counter(), written)
            check_stop(
                f"{spec.name} {cond} batch {batch_index}"
            )  # what is written stays; resumed later
    bar.close()
    return written, new_tokens, time.perf_counter() - t_start
