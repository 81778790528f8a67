"""`ocg import`: a harness's log into ocg's answer store. The log's answers are checked against
ocg's instances (each prompt's sha256, none missing), written as a replay file, and generated
through the replay backend, so the store and run card are written by ocg's own code; a run file
beside them lets `ocg report` build the full report on them (docs/harnesses.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..core.errors import OcgInputError
from ..core.frames import DEFAULT_N_CONCEPTS
from ..core.layout import Outputs, outputs
from .asked import messages_of, messages_sha256, select
from .log_reading import HarnessLog, read_log

# what a report of imported answers scores with offline (as params/runs/smoke.yaml does)
PERPLEXITY_FALLBACK = "embedded:smollm2-135m-instruct"


@dataclass(frozen=True)
class Imported:
    model_dir: Path  # the store and run card
    run_file: Path  # for `ocg report`
    answers: int


def checked_answers(log: HarnessLog) -> dict[tuple[str, int], str | None]:
    """(instance id, sample) -> raw output, every prompt ocg's and no instance missing; else one
    OcgInputError naming the file and the sample."""
    rows = {r["instance_id"]: r for r in select(log.selection).to_dict("records")}
    answers: dict[tuple[str, int], str | None] = {}
    for a in log.answers:
        row = rows.get(a.instance_id)
        if row is None:
            raise OcgInputError(a.where, f"{a.instance_id} is not an instance ocg asks here")
        want, got = messages_sha256(messages_of(row)), messages_sha256(a.messages)
        if got != want:
            raise OcgInputError(
                a.where,
                f"the prompt sent (sha256 {got[:12]}) is not ocg's for {a.instance_id} "
                f"(sha256 {want[:12]}): not made with ocg's task",
            )
        if (a.instance_id, a.sample) in answers:
            raise OcgInputError(a.where, f"{a.instance_id} sample {a.sample} appears twice")
        answers[(a.instance_id, a.sample)] = a.raw
    samples = 1 + max((s for _, s in answers), default=0)
    missing = [(i, s) for i in rows for s in range(samples) if (i, s) not in answers]
    if missing:
        raise OcgInputError(
            str(log.path),
            f"misses {len(missing)} of the {len(rows) * samples} answers asked (first: "
            f"{missing[0][0]} sample {missing[0][1]}); a --limit run or failed samples: rerun all",
        )
    return answers


def _write_files(log: HarnessLog, name: str, folder: Path, root: Outputs, samples: int) -> Path:
    """The replay file, models file, provenance and run file; returns the run file."""
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"backend": "replay", "id": log.model, "replay": {"file": "answers.jsonl"}}
    (folder / "models.yaml").write_text(
        f"# answers imported from {log.harness} {log.version} (harness.json)\n"
        + yaml.safe_dump({"models": {name: entry}}, sort_keys=False)
    )
    (folder / "harness.json").write_text(json.dumps(log.provenance(), indent=1, default=str))
    s = log.selection
    run = {
        "name": name,
        "models": [name],
        "models_file": "models.yaml",
        "conditions": list(s.conditions),
        "n_concepts": s.n_concepts,
        "subset_k": s.subset_k,
        "permutations": s.permutations,
        "template_ids": None if s.template_ids is None else list(s.template_ids),
        "batch_check": 0,
        "scoring": {"perplexity_fallback": PERPLEXITY_FALLBACK},
        "outputs": str(root.root.resolve()),
        **({"samples": samples} if samples > 1 else {}),
    }
    run_file = folder / "run.yaml"
    run_file.write_text(yaml.safe_dump(run, sort_keys=False))
    return run_file


def import_log(path: Path, name: str, root: Outputs | None = None) -> Imported:
    from ..generation.run_generation import generate

    log = read_log(path)
    if log.selection.n_concepts != DEFAULT_N_CONCEPTS:
        raise OcgInputError(str(path), "imports of five-concept runs are not supported yet")
    answers = checked_answers(log)
    root = root or outputs()
    folder = root.root / "imports" / name
    samples = 1 + max(s for _, s in answers)
    run_file = _write_files(log, name, folder, root, samples)
    with (folder / "answers.jsonl").open("w") as fh:
        for (iid, sample), raw in sorted(answers.items()):
            fh.write(json.dumps({"instance_id": iid, "sample": sample, "answer": raw}) + "\n")
    s = log.selection
    model_dir = generate(
        name,
        conditions=list(s.conditions),
        subset_k=s.subset_k,
        template_ids=None if s.template_ids is None else list(s.template_ids),
        permutations=s.permutations,
        out_dir=root.generations,
        models_file=folder / "models.yaml",
        samples=samples,
        batch_check=0,
    )
    (model_dir / "harness.json").write_text((folder / "harness.json").read_text())
    return Imported(model_dir, run_file, len(answers))
