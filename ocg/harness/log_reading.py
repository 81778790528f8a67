"""A harness's log as ocg reads it: per answer its instance id, sample index, the chat turns sent
and the raw output; and the log's provenance (the harness and its version, the model, the
generation config). inspect_ai's eval logs (.eval, .json) and lm-eval's `--log_samples` JSONL."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import OcgInputError
from .asked import Selection

SELECTION_FIELD = "ocg_selection"  # where the task's documents and metadata carry the selection


@dataclass(frozen=True)
class HarnessAnswer:
    instance_id: str
    sample: int
    messages: list[dict]
    raw: str | None
    where: str  # file and sample, for the one-line refusals


@dataclass(frozen=True)
class HarnessLog:
    path: Path
    harness: str
    version: str | None
    model: str
    selection: Selection
    answers: list[HarnessAnswer]
    generation: dict = field(default_factory=dict)

    def provenance(self) -> dict:
        return {
            "harness": self.harness,
            "harness_version": self.version,
            "model": self.model,
            "generation_config": self.generation,
            "log": str(self.path.resolve()),
            "selection": self.selection.as_params(),
        }


def read_log(path: Path) -> HarnessLog:
    """inspect's log (.eval, .json) or lm-eval's samples (.jsonl), by the file's suffix."""
    if not path.is_file():
        raise OcgInputError(str(path), "no such log file")
    if path.suffix == ".jsonl":
        return read_lm_eval(path)
    if path.suffix in (".eval", ".json"):
        return read_inspect(path)
    raise OcgInputError(
        str(path), "expected an inspect eval log (.eval, .json) or lm-eval samples (.jsonl)"
    )


def read_inspect(path: Path) -> HarnessLog:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:  # noqa: BLE001 - inspect's own errors, of many kinds
        raise OcgInputError(str(path), f"not an inspect eval log ({exc})") from None
    if not log.eval.task.endswith("ordered_commongen"):
        raise OcgInputError(str(path), f"a log of task {log.eval.task}, not ocg/ordered_commongen")
    args = {k: v for k, v in (log.eval.task_args or {}).items() if v is not None}
    answers = []
    for s in log.samples or []:
        where = f"{path}: sample {s.id} epoch {s.epoch}"
        if s.error is not None:
            raise OcgInputError(where, f"the sample failed in inspect ({s.error.message[:120]})")
        turns = [s.input] if isinstance(s.input, str) else s.input
        messages = [
            {"role": "user", "content": t}
            if isinstance(t, str)
            else {"role": t.role, "content": t.text}
            for t in turns
        ]
        answers.append(HarnessAnswer(str(s.id), s.epoch - 1, messages, s.output.completion, where))
    return HarnessLog(
        path=path,
        harness="inspect_ai",
        version=log.eval.packages.get("inspect_ai"),
        model=log.eval.model,
        selection=Selection.given(**args),
        answers=answers,
        generation={  # the task's config, then the command line's over it
            **log.plan.config.model_dump(exclude_none=True),
            **log.eval.model_generate_config.model_dump(exclude_none=True),
            **(log.eval.model_args or {}),
        },
    )


def _results_beside(path: Path) -> dict:
    """lm-eval's results file written with the samples (same timestamp), if present."""
    stamp = path.stem.rsplit("_", 1)[-1]
    found = sorted(path.parent.glob(f"results_{stamp}.json"))
    return json.loads(found[0].read_text()) if found else {}


def _lm_eval_answer(path: Path, lineno: int, record: dict) -> tuple[HarnessAnswer, str]:
    where = f"{path}:{lineno}"
    doc = record.get("doc")
    if not isinstance(doc, dict) or not isinstance(doc.get("instance_id"), str):
        raise OcgInputError(where, "no ocg document (doc.instance_id): not ocg's lm-eval task")
    messages = [{"role": "system", "content": doc["system"]}] if doc.get("system") else []
    messages.append({"role": "user", "content": doc.get("user", "")})
    sent = str(((record.get("arguments") or {}).get("gen_args_0") or {}).get("arg_0", ""))
    if any(m["content"] not in sent for m in messages):
        raise OcgInputError(where, "the prompt sent does not hold the document's turns")
    resps = record.get("resps") or [[None]]
    raw = resps[0][0] if resps and resps[0] else None
    return HarnessAnswer(doc["instance_id"], 0, messages, raw, where), doc.get(SELECTION_FIELD, "")


def read_lm_eval(path: Path) -> HarnessLog:
    answers, selections = [], set()
    with path.open() as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise OcgInputError(f"{path}:{lineno}", f"not JSON ({exc.msg})") from None
            answer, selection = _lm_eval_answer(path, lineno, record)
            answers.append(answer)
            selections.add(selection)
    if len(selections) != 1:
        raise OcgInputError(str(path), "no sample, or samples of several selections")
    results = _results_beside(path)
    config = results.get("config", {})
    task = results.get("configs", {}).get("ordered_commongen", {})
    return HarnessLog(
        path=path,
        harness="lm-eval",
        version=results.get("lm_eval_version"),
        model=str(results.get("model_name") or config.get("model") or "unknown"),
        selection=Selection.given(**json.loads(selections.pop())),
        answers=answers,
        generation={
            "model_args": config.get("model_args"),
            "generation_kwargs": task.get("generation_kwargs"),
            "chat_template_sha": results.get("chat_template_sha"),
            "limit": config.get("limit"),
        },
    )
