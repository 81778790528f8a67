"""Generate answers for one model over the instances: planned batches, resumable, with a run card.

The batch plan is fixed by the instance list: prompts sorted by token length (longest first,
ties by instance id) and cut into batches of the model's batch size. A resumed run forms the
same batches, regenerates only batches with missing ids, and writes only the missing ids, so
its answers equal an uninterrupted run's (greedy outputs depend on batch composition).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import time
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..data import build_instances, load_concept_sets, load_dataset, load_templates
from ..data.concepts import select_covering_subset
from ..errors import OcgInputError
from ..io import read_json, write_json
from ..models import MODELS_FILE, ModelSpec, get_model
from ..paths import outputs_dir
from ..provenance import provenance
from .extraction import extract_answer, prompt_opens_think
from .store import GenerationStore

# Settings that must not change between the runs that fill one output directory.
SETTINGS_KEYS = ("id", "revision", "resolved_revision", "quantization", "dtype", "max_new_tokens",
                 "seed", "decoding", "answer_extraction", "chat_template_sha256", "system_mode",
                 "system_prompt")


def generations_dir() -> Path:
    return outputs_dir() / "generations"


def select_instances(dataset: str | Path | None = None, conditions=("original", "ordered"),
                     subset_k: int | None = None, template_ids=None, n_concepts: int = 4
                     ) -> pd.DataFrame:
    """Instances to generate: from a built dataset directory, or built in memory (same ids)."""
    conditions = list(conditions)
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
        df = build_instances(sets, load_templates(), conditions)
    if template_ids is not None:
        df = df[df["template_id"].isin(list(template_ids))]
    return df.reset_index(drop=True)


def plan_batches(instance_ids: list[str], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Row positions grouped into batches: longest prompts first, ties broken by id."""
    order = sorted(range(len(instance_ids)), key=lambda i: (-lengths[i], instance_ids[i]))
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def make_backend(spec: ModelSpec, batch_size: int | None = None):
    if spec.backend == "openai":
        from .api_backend import OpenAIBackend
        return OpenAIBackend(spec, batch_size)
    from .hf_backend import TransformersBackend
    return TransformersBackend(spec, batch_size)


def _settings(spec: ModelSpec, backend_card: dict, system_prompt: str) -> dict:
    return {
        "id": spec.id, "revision": spec.revision,
        "resolved_revision": backend_card.get("resolved_revision"),
        "quantization": spec.quantization, "dtype": spec.dtype,
        "max_new_tokens": spec.max_new_tokens, "seed": spec.seed,
        "decoding": "greedy" if spec.backend == "transformers" else
                    f"temperature={spec.api.get('temperature')}",
        "answer_extraction": spec.answer_extraction,
        "chat_template_sha256": backend_card.get("chat_template_sha256"),
        "system_mode": backend_card.get("system_mode"),
        "system_prompt": system_prompt,
    }


def _check_compatible(card_path: Path, settings: dict) -> dict | None:
    if not card_path.exists():
        return None
    old = read_json(card_path)
    for key in SETTINGS_KEYS:
        if old["settings"].get(key) != settings.get(key):
            raise OcgInputError(str(card_path), f"setting {key!r} was {old['settings'].get(key)!r}, "
                                f"now {settings.get(key)!r}: these generations would mix two "
                                "settings; use another output directory or model name")
    return old


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def generate(model: str | ModelSpec, conditions=("original", "ordered"), subset_k: int | None = None,
             template_ids=None, dataset: str | Path | None = None, out_dir: str | Path | None = None,
             batch_size: int | None = None, models_file: str | Path = MODELS_FILE,
             progress: bool = True) -> Path:
    """Generate (or resume) one model's answers; returns its output directory."""
    spec = model if isinstance(model, ModelSpec) else get_model(model, models_file)
    instances = select_instances(dataset, conditions, subset_k, template_ids)
    model_dir = Path(out_dir or generations_dir()) / spec.name
    model_dir.mkdir(parents=True, exist_ok=True)
    stores = {c: GenerationStore(model_dir / f"{c}.jsonl") for c in conditions}
    todo = sum(int((~instances.loc[instances.condition == c, "instance_id"].isin(s.done)).sum())
               for c, s in stores.items())
    card_path = model_dir / "run_card.json"
    if todo == 0 and card_path.exists():
        return model_dir  # everything asked for is on disk: do not even load the model

    backend = make_backend(spec, batch_size)
    system_prompt = load_templates().system_prompt
    backend_card = backend.card()
    settings = _settings(spec, backend_card, system_prompt)
    old = _check_compatible(card_path, settings)
    run = {"started_utc": _now(), "conditions": list(conditions), "subset_k": subset_k,
           "template_ids": None if template_ids is None else list(template_ids),
           "dataset": str(dataset) if dataset else None, "n_instances": len(instances),
           "todo": todo, "status": "running",
           "repaired_torn_bytes": {c: s.repaired_bytes for c, s in stores.items() if s.repaired_bytes}}
    card = {"model": spec.name, "spec": spec.as_dict(), "settings": settings,
            "backend": backend_card, "provenance": provenance(),
            "runs": (old or {}).get("runs", []) + [run]}
    write_json(card_path, card)

    bar = tqdm(total=todo, unit="inst", desc=spec.name, disable=not progress, smoothing=0.1)
    t_start, new_tokens, written = time.perf_counter(), 0, 0
    for cond in conditions:
        store = stores[cond]
        rows = instances[instances.condition == cond].reset_index(drop=True)
        rendered = [backend.render(json.loads(m)) for m in rows["messages"]]
        plan = plan_batches(list(rows["instance_id"]), backend.prompt_lengths(rendered),
                            backend.batch_size)
        for batch_index, positions in enumerate(plan):
            missing = {rows.at[p, "instance_id"] for p in positions} - store.done
            if not missing:
                continue
            outputs = backend.generate([rendered[p] for p in positions])
            records = []
            for p, out in zip(positions, outputs):
                row = rows.iloc[p]
                opens_think = isinstance(rendered[p], str) and prompt_opens_think(rendered[p])
                answer, status = extract_answer(out["raw"], spec.answer_extraction, opens_think)
                records.append({
                    "instance_id": row.instance_id, "model": spec.name, "condition": cond,
                    "template_id": int(row.template_id), "set_id": row.set_id,
                    "perm_index": int(row.perm_index), "concepts": list(row.concepts),
                    "pos_pattern": row.pos_pattern,
                    "prompt_sha256": hashlib.sha256(row.messages.encode()).hexdigest()[:16],
                    "answer": answer, "answer_status": status, **out,
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
    elapsed = time.perf_counter() - t_start
    run.update(status="complete", finished_utc=_now(), written=written, seconds=round(elapsed, 2),
               new_tokens=new_tokens, tokens_per_s=round(new_tokens / max(elapsed, 1e-9), 2))
    card["backend"] = backend.card()
    write_json(card_path, card)
    return model_dir


def read_generations(model_dir: str | Path, conditions=None) -> pd.DataFrame:
    """All records of one model directory as a DataFrame."""
    model_dir = Path(model_dir)
    frames = []
    for path in sorted(model_dir.glob("*.jsonl")):
        if conditions is None or path.stem in conditions:
            frames.append(pd.DataFrame(GenerationStore(path).records()))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
