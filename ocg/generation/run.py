"""Generate answers for one model over the instances: planned batches, resumable, with a run card.

The batch plan is fixed by the instance list: prompts sorted by token length (longest first,
ties by instance id) and cut into batches of the model's batch size. A resumed run forms the
same batches, regenerates only batches with missing ids, and writes only the missing ids, so
its answers equal an uninterrupted run's (greedy outputs depend on batch composition).
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..data import build_instances, ids_hash, load_concept_sets, load_dataset, load_templates
from ..data.concepts import select_covering_subset
from ..errors import OcgInputError
from ..io import read_json, write_json, write_json_when_full
from ..layout import ModelGenerations
from ..models import MODELS_FILE, ModelSpec, get_model
from ..provenance import provenance
from .chat import prompt_sha256
from .completeness import tally_stores
from .extraction import answer_source, extract_answer, prompt_opens_think
from .lock import exclusive
from .store import GenerationStore

# Settings that must not change between the runs that fill one output directory. The
# rendered prompts are checked too, record by record (`prompt_sha256`).
SETTINGS_KEYS = ("id", "revision", "resolved_revision", "quantization", "dtype", "max_new_tokens",
                 "seed", "decoding", "generation_overrides", "answer_extraction", "batch_size",
                 "system_prompt", "chat_template_sha256", "system_mode", "prompt_date", "bos",
                 "template_default_system_prompt")


def select_instances(dataset: str | Path | None = None, conditions=("original", "ordered"),
                     subset_k: int | None = None, template_ids=None, n_concepts: int = 4
                     ) -> pd.DataFrame:
    """Instances to generate: from a built dataset directory, or built in memory (same ids)."""
    conditions = list(conditions)
    if not conditions:
        raise OcgInputError("conditions", "empty: name at least one condition")
    if subset_k is not None and (isinstance(subset_k, bool) or not isinstance(subset_k, int) or subset_k < 1):
        raise OcgInputError("subset_k", f"got {subset_k!r}; expected a positive number of concept sets or None")
    config = load_templates()
    for cond in conditions:
        config.condition(cond)
    if template_ids is not None:
        template_ids = list(template_ids)
        for tid in template_ids:
            if isinstance(tid, bool) or not isinstance(tid, int) or tid not in config.templates:
                raise OcgInputError("template_ids", f"unknown template id {tid!r}; known: {sorted(config.templates)}")
    if dataset is not None:
        df, _ = load_dataset(dataset)
        unknown = sorted(set(conditions) - set(df["condition"]))
        if unknown:
            raise OcgInputError(f"{dataset}", f"dataset has no condition(s) {unknown}")
        df = df[df["condition"].isin(conditions)]
        if subset_k:
            sets = [s for s in load_concept_sets(int(df["n_concepts"].iloc[0]))
                    if s.set_id in set(df["set_id"])]
            keep = {s.set_id for s in select_covering_subset(sets, subset_k)}
            df = df[df["set_id"].isin(keep)]
    else:
        sets = load_concept_sets(n_concepts)
        if subset_k:
            sets = select_covering_subset(sets, subset_k)
        df = build_instances(sets, config, conditions)
    if template_ids is not None:
        df = df[df["template_id"].isin(template_ids)]
    return df.reset_index(drop=True)


def plan_batches(instance_ids: list[str], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Row positions grouped into batches: longest prompts first, ties broken by id."""
    order = sorted(range(len(instance_ids)), key=lambda i: (-lengths[i], instance_ids[i]))
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def make_backend(spec: ModelSpec, batch_size: int | None = None, instances: pd.DataFrame | None = None):
    """The entry's backend; the replay backend answers by instance, so it is given them."""
    if spec.backend == "replay":
        from .replay_backend import ReplayBackend
        return ReplayBackend(spec, batch_size, instances)
    if spec.backend == "openai":
        from .api_backend import OpenAIBackend
        return OpenAIBackend(spec, batch_size)
    from .hf_backend import TransformersBackend
    return TransformersBackend(spec, batch_size)


def _settings(spec: ModelSpec, backend, system_prompt: str | None) -> dict:
    return {
        "id": spec.id, "revision": spec.revision, "resolved_revision": backend.resolved_revision(),
        "quantization": spec.quantization, "dtype": spec.dtype,
        "max_new_tokens": spec.max_new_tokens, "seed": spec.seed,
        "decoding": {"transformers": spec.decoding, "replay": "replay"}.get(
            spec.backend, f"temperature={spec.api.get('temperature')}"),
        "generation_overrides": dict(spec.generation_overrides),
        "answer_extraction": spec.answer_extraction, "batch_size": backend.batch_size,
        "system_prompt": system_prompt if system_prompt is not None else "(none: the template's default)",
        **backend.prompt_settings(),
    }


def _check_compatible(card_path: Path, settings: dict, instances: dict[str, str]) -> dict | None:
    """The old run card, if the new run may add to its directory; else an error saying why."""
    if not card_path.exists():
        return None
    old = read_json(card_path)
    for key in SETTINGS_KEYS:
        was, now = old.get("settings", {}).get(key, "(not recorded)"), settings.get(key)
        if key == "resolved_revision" and (was is None or now is None):
            continue  # known only once weights load; checked again then
        if was != now:
            raise OcgInputError(str(card_path), f"setting {key!r} was {was!r}, now {now!r}: these "
                                "generations would mix two settings; use another output directory "
                                "or model name")
    for cond, ids_sha in instances.items():
        was = old.get("instances", {}).get(cond)
        if was is not None and was != ids_sha:
            raise OcgInputError(str(card_path), f"condition {cond!r} holds another instance set "
                                f"(ids sha256 {was[:12]}..., now {ids_sha[:12]}...): a subset run and "
                                "a full run cannot share a directory; use another output directory")
    return old


def _check_prompts(store: GenerationStore, hashes: dict[str, str]) -> None:
    """Every record already on disk was asked exactly the prompt the model would get now."""
    for lineno, record in enumerate(store.records(), start=1):
        want = hashes.get(record["instance_id"])
        if want is not None and record.get("prompt_sha256") != want:
            raise OcgInputError(f"{store.path}:{lineno}", f"instance {record['instance_id']} was asked "
                                "another prompt than the one rendered now (template, suffix, one-shot, "
                                "system prompt, chat template or date changed): one file would hold two "
                                "experiments; use another output directory")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _close_stale_runs(runs: list[dict]) -> list[dict]:
    """A run still marked running was killed (its lock is free now): say so."""
    for r in runs:
        if r.get("status") == "running":
            r.update(status="interrupted", note="the process ended without finishing (killed?)")
    return runs


def check_batch_invariance(backend, rendered: dict[str, object], raw: dict[str, str], n: int,
                           seed: int, progress: bool = True) -> dict:
    """Regenerate a sample at batch size 1; the share of answers that batching changed."""
    sample = sorted(random.Random(seed).sample(sorted(raw), min(n, len(raw))))
    differ = []
    for iid in tqdm(sample, desc="batch-1 check", unit="inst", disable=not progress):
        if backend.generate([rendered[iid]], instance_ids=[iid])[0]["raw"] != raw[iid]:
            differ.append(iid)
    return {"checked": len(sample), "differ": len(differ),
            "share_differ": round(len(differ) / len(sample), 4) if sample else None,
            "instances_differ": differ, "batched_size": backend.batch_size,
            "dtype": backend.spec.dtype, "quantization": backend.spec.quantization}


def generate(model: str | ModelSpec, conditions=("original", "ordered"), subset_k: int | None = None,
             template_ids=None, dataset: str | Path | None = None, out_dir: str | Path | None = None,
             batch_size: int | None = None, models_file: str | Path = MODELS_FILE,
             progress: bool = True) -> Path:
    """Generate (or resume) one model's answers; returns its output directory."""
    spec = model if isinstance(model, ModelSpec) else get_model(model, models_file)
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise OcgInputError("batch_size", f"got {batch_size!r}; expected a positive integer")
    conditions = list(conditions)
    instances = select_instances(dataset, conditions, subset_k, template_ids)
    if instances.empty:
        raise OcgInputError("instances", "the selection holds no instance")
    model_dir = ModelGenerations.of(spec.name, out_dir).folder
    with exclusive(model_dir):
        return _generate_locked(spec, instances, conditions, model_dir, batch_size, progress,
                                {"subset_k": subset_k, "dataset": str(Path(dataset).resolve()) if dataset else None,
                                 "template_ids": None if template_ids is None else list(template_ids)})


def _generate_locked(spec, instances, conditions, model_dir, batch_size, progress, asked) -> Path:
    stores = {c: GenerationStore(ModelGenerations(model_dir).store(c)) for c in conditions}
    rows = {c: instances[instances.condition == c].reset_index(drop=True) for c in conditions}
    ids_sha = {c: ids_hash(rows[c]) for c in conditions}
    backend = make_backend(spec, batch_size, instances)  # tokenizer (or API client) only; weights load later
    system_prompt = load_templates().system_prompt if spec.system_prompt == "paper" else None
    rendered, hashes = {}, {}
    for cond in conditions:
        for iid, msgs in zip(rows[cond]["instance_id"], rows[cond]["messages"]):
            messages = json.loads(msgs)
            if system_prompt is None:
                messages = [m for m in messages if m["role"] != "system"]
            rendered[iid] = backend.render(messages)
            hashes[iid] = prompt_sha256(rendered[iid])
    settings = _settings(spec, backend, system_prompt)
    card_path = ModelGenerations(model_dir).run_card
    old = _check_compatible(card_path, settings, ids_sha)
    for store in stores.values():
        _check_prompts(store, hashes)
    todo = sum(int((~rows[c]["instance_id"].isin(s.done)).sum()) for c, s in stores.items())
    runs = _close_stale_runs((old or {}).get("runs", []))
    card = {"model": spec.name, "status": "running", "spec": spec.as_dict(), "settings": settings,
            "instances": {**(old or {}).get("instances", {}), **ids_sha},
            "selection": {**(old or {}).get("selection", {}), **{c: asked for c in conditions}},
            "backend": backend.card(), "provenance": provenance(), "runs": runs}
    if todo == 0:
        card.update(status="complete", checked_utc=_now(), records=tally_stores(stores, rows))
        if old:
            card["backend"], card["provenance"] = old.get("backend", card["backend"]), old.get("provenance")
        write_json(card_path, card)
        return model_dir  # everything asked for is on disk, asked with these prompts and settings

    with _server_if_any(spec, backend, model_dir):
        return _generate_todo(spec, backend, stores, rows, rendered, hashes, settings, card, card_path,
                              conditions, instances, todo, asked, progress)


@contextmanager
def _server_if_any(spec, backend, model_dir: Path):
    """The model entry's inference server, started for this run's generation (api.server)."""
    if spec.backend != "openai" or not spec.api.get("server"):
        yield None
        return
    from .api_backend import ApiError
    from .server import ServerError, running_server
    with running_server(spec, model_dir / "server.log") as info:
        backend.url, backend.server = info["base_url"] + "/chat/completions", info
        try:  # one request alone first: some servers load the model on the first request, and
            backend._request([{"role": "user", "content": "Say OK."}])  # race on concurrent ones
        except ApiError as exc:
            raise ServerError(f"the server answers /models but not a first chat request for model "
                              f"{spec.id!r} (unknown to it?): {exc}; log {info['log']}") from None
        yield info


def _generate_todo(spec, backend, stores, rows, rendered, hashes, settings, card, card_path, conditions,
                   instances, todo, asked, progress) -> Path:
    model_dir = card_path.parent
    repaired = {c: n for c, s in stores.items() if (n := s.prepare_for_append())}
    run = {"started_utc": _now(), "conditions": conditions, **asked, "n_instances": len(instances),
           "todo": todo, "status": "running", "repaired_torn_bytes": repaired}
    card["runs"].append(run)
    write_json(card_path, card)
    try:
        written, new_tokens, seconds = _generate_missing(spec, backend, stores, rows, rendered, hashes,
                                                        settings, card_path, progress)
        run.update(written=written, seconds=round(seconds, 2), new_tokens=new_tokens,
                   tokens_per_s=round(new_tokens / max(seconds, 1e-9), 2))
        counts = {}
        for store in stores.values():
            for r in store.records():
                key = f"{r['answer_status']}/{r.get('answer_source', 'raw')}"
                counts[key] = counts.get(key, 0) + 1
        run["answers_by_status_and_source"] = counts
        if spec.batch_check and backend.batch_size > 1:
            raw = {r["instance_id"]: r["raw"] for s in stores.values() for r in s.records()
                   if r["instance_id"] in rendered}
            run["batch_invariance"] = check_batch_invariance(backend, rendered, raw, spec.batch_check,
                                                             spec.seed, progress)
    except BaseException as exc:
        run.update(status="failed" if isinstance(exc, Exception) else "interrupted",
                   finished_utc=_now(), error=f"{type(exc).__name__}: {str(exc)[:500]}")
        card.update(status=run["status"], backend=backend.card())
        write_json_when_full(card_path, card)  # a full disk still leaves the card `failed`
        raise
    run.update(status="complete", finished_utc=_now())
    card.update(status="complete", backend=backend.card(), records=tally_stores(stores, rows))
    write_json(card_path, card)
    return model_dir


def _generate_missing(spec, backend, stores, rows, rendered, hashes, settings, card_path, progress):
    todo = sum(int((~rows[c]["instance_id"].isin(s.done)).sum()) for c, s in stores.items())
    bar = tqdm(total=todo, unit="inst", desc=spec.name, disable=not progress, smoothing=0.1)
    t_start, new_tokens, written, checked_revision = time.perf_counter(), 0, 0, False
    for cond, store in stores.items():
        ids = list(rows[cond]["instance_id"])
        plan = plan_batches(ids, backend.prompt_lengths([rendered[i] for i in ids]), backend.batch_size)
        for batch_index, positions in enumerate(plan):
            missing = {ids[p] for p in positions} - store.done
            if not missing:
                continue
            outputs = backend.generate([rendered[ids[p]] for p in positions], instance_ids=[ids[p] for p in positions])
            if not checked_revision:  # weights are loaded now: the resolved revision is known
                _check_compatible(card_path, dict(settings, resolved_revision=backend.resolved_revision()), {})
                settings["resolved_revision"] = backend.resolved_revision()
                checked_revision = True
            records = []
            for p, out in zip(positions, outputs):
                row = rows[cond].iloc[p]
                prompt = rendered[row.instance_id]
                opens_think = isinstance(prompt, str) and prompt_opens_think(prompt)
                answer, status = extract_answer(out["raw"], spec.answer_extraction, opens_think)
                records.append({
                    "instance_id": row.instance_id, "model": spec.name, "condition": cond,
                    "template_id": int(row.template_id), "set_id": row.set_id,
                    "perm_index": int(row.perm_index), "concepts": list(row.concepts),
                    "pos_pattern": row.pos_pattern, "prompt": prompt,
                    "prompt_sha256": hashes[row.instance_id],
                    "answer": answer, "answer_status": status,
                    "answer_source": answer_source(out["raw"], spec.answer_extraction), **out,
                    "batch_index": batch_index, "planned_batch_size": len(positions),
                    "system_mode": backend.system_mode, "time_utc": _now(),
                })
            n = store.append(records)
            written += n
            new_tokens += sum(r["completion_tokens"] or 0 for r in records if r["instance_id"] in missing)
            elapsed = max(time.perf_counter() - t_start, 1e-9)
            bar.update(n)
            bar.set_postfix(inst_s=f"{written / elapsed:.2f}", tok_s=f"{new_tokens / elapsed:.1f}")
    bar.close()
    return written, new_tokens, time.perf_counter() - t_start


def read_generations(model_dir: str | Path, conditions=None) -> pd.DataFrame:
    """All records of one model directory as a DataFrame."""
    model_dir = Path(model_dir)
    frames = []
    for path in sorted(model_dir.glob("*.jsonl")):
        if conditions is None or path.stem in conditions:
            frames.append(pd.DataFrame(GenerationStore.read(path)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
