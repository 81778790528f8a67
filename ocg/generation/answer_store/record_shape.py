"""A generation record as the store (store.py) holds it: the shape scoring needs, its key
(instance id, sample), and its prompt moved to the prompt file on writing (format 2 and 3) and
put back on reading."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import OcgInputError
from ...core.frames import checked_sample, record_sample
from ...core.layout import ModelGenerations
from ..backends.chat import prompt_sha256
from .prompt_file import PromptFile

# Fields every record must have, with their types (None allowed where listed).
REQUIRED = {
    "instance_id": (str,),
    "condition": (str,),
    "template_id": (int,),
    "set_id": (str,),
    "perm_index": (int,),
    "concepts": (list,),
    "pos_pattern": (str,),
    "answer": (str, type(None)),
    "answer_status": (str,),
}


def check_record(record: object, where: str) -> dict:
    """The record if it has the shape scoring needs, else an error naming file and line."""
    if not isinstance(record, dict):
        raise OcgInputError(
            where, f"expected a JSON object (a generation record), got {type(record).__name__}"
        )
    for key, kinds in REQUIRED.items():
        if key not in record:
            raise OcgInputError(where, f"record has no {key!r} field")
        value = record[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise OcgInputError(
                where, f"field {key!r} must be {names}, got {type(value).__name__} {value!r:.60}"
            )
    checked_sample(where, record)
    if not all(isinstance(c, str) for c in record["concepts"]):
        raise OcgInputError(where, "field 'concepts' must be a list of words")
    return record


def record_key(record: dict) -> tuple[str, int]:
    """What a record answers: (instance id, sample); no `sample` field is sample 0."""
    return record["instance_id"], record_sample(record)


def describe_key(key: tuple[str, int]) -> str:
    return f"instance {key[0]}" + (f" sample {key[1]}" if key[1] else "")


def prompt_file(path: Path) -> PromptFile:
    """The prompt file of the store at `path` (`<condition>.prompts.jsonl.gz` beside it)."""
    return PromptFile(ModelGenerations(path.parent).store(path.stem, prompts=True))


def refers(record: dict) -> bool:
    """A format 2 record: its prompt is in the prompt file."""
    return "prompt" not in record and "prompt_sha256" in record


def with_prompts(path: Path, records: list[dict], lines: list[int]) -> list[dict]:
    """The records, each format 2 one with its prompt put back before its `prompt_sha256`."""
    if not any(refers(r) for r in records):
        return records
    file = prompt_file(path)
    prompts = file.read()
    out = []
    for record, lineno in zip(records, lines):
        if refers(record):
            prompt = prompts.get(record["prompt_sha256"])
            if prompt is None:
                raise OcgInputError(
                    f"{path}:{lineno}",
                    f"prompt {str(record['prompt_sha256'])[:64]!r} is not in "
                    f"{file.path.name}: that file was removed or edited",
                )
            record = _put_back(record, prompt)
        out.append(record)
    return out


def _put_back(record: dict, prompt) -> dict:
    """The record with `prompt` where format 1 wrote it: just before `prompt_sha256`."""
    out = {}
    for key, value in record.items():
        if key == "prompt_sha256":
            out["prompt"] = prompt
        out[key] = value
    return out


def split_prompt(record: dict, prompts: dict[str, object]) -> dict:
    """A record as format 2 writes it: its prompt (text or messages) moved to `prompts` by sha256."""
    prompt = record.get("prompt")
    if not isinstance(prompt, (str, list)):
        return record
    key = prompt_sha256(prompt)
    if record.get("prompt_sha256", key) != key:
        raise ValueError(
            f"{describe_key(record_key(record))}: prompt_sha256 is not the sha256 of its prompt"
        )
    prompts[key] = prompt
    return {k: v for k, v in {**record, "prompt_sha256": key}.items() if k != "prompt"}
