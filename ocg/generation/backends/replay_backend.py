"""Replay backend (`backend: replay`): answers written before, through the real pipeline.

With `replay.file`, answers come from a JSONL keyed by instance id (`{"instance_id": ...,
"answer": ...}` per line; `raw` is read where `answer` is absent), e.g. outputs of a model run
elsewhere, or an ocg store (its format 3 lines read as the store reads them). Without a file, a deterministic synthetic writer (synthetic.py) produces realistic
answers. Either way the answers go through the same store, run card, resume and prompt checks
as any model's, so tests and benchmarks exercise the real path. The file's sha256 (or the
writer's version, seed and rates) is the entry's resolved revision: a resume against another
file or other rates stops instead of mixing two sources.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ...config.models_file import ModelEntry
from ...core.errors import OcgInputError
from ...core.files import loads_json
from ...core.frames import checked_sample
from ...core.paths import PACKAGE_DATA, PROJECT_ROOT, SHIPPED_DATA
from ...records import BackendBlock
from ..answer_store.record_format import read_record
from .batch_auto import BatchSize, given_batch
from .chat import MessagePrompts
from .synthetic import WRITER_VERSION, model_rates, write_answer

if TYPE_CHECKING:
    import pandas as pd


def replay_file(spec: ModelEntry) -> Path | None:
    """The entry's answers file, if any (a relative one was made absolute beside its models file
    when the file was read, ocg/config/model_registry.py; else it is relative to the project root)."""
    name = spec.replay.file if spec.replay else None
    if not name:
        return None
    if name.startswith(SHIPPED_DATA):
        return PACKAGE_DATA / name.removeprefix(SHIPPED_DATA)
    path = Path(name).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def read_answers(path: Path, field: str = "replay.file") -> dict[tuple[str, int], str | None]:
    """(instance_id, sample) -> answer (a line without `sample` is sample 0); every line checked,
    errors name file and line."""
    if not path.is_file():
        raise OcgInputError(str(path), f"no such replay file (set by {field})")
    answers: dict[tuple[str, int], str | None] = {}
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            where = f"{path}:{lineno}"
            if not line.strip():
                continue
            try:
                record = loads_json(line)
            except json.JSONDecodeError as exc:
                raise OcgInputError(
                    where, f"not JSON ({exc.msg}); expected one object per line"
                ) from None
            record = read_record(record, where)
            if not isinstance(record, dict) or not isinstance(record.get("instance_id"), str):
                raise OcgInputError(where, "expected an object with a string 'instance_id'")
            answer = record.get("answer", record.get("raw"))
            if answer is not None and not isinstance(answer, str):
                raise OcgInputError(
                    where, f"'answer' must be text or null, got {type(answer).__name__}"
                )
            sample = checked_sample(where, record)
            key = (record["instance_id"], sample)
            if key in answers:
                raise OcgInputError(
                    where, f"instance {key[0]}{f' sample {sample}' if sample else ''} appears twice"
                )
            answers[key] = answer
    return answers


def _objects(path: Path, field: str):
    """(file:line, object) for each non-empty line of a JSONL file."""
    if not path.is_file():
        raise OcgInputError(str(path), f"no such replay file (set by {field})")
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            where = f"{path}:{lineno}"
            if not line.strip():
                continue
            try:
                record = loads_json(line)
            except json.JSONDecodeError as exc:
                raise OcgInputError(
                    where, f"not JSON ({exc.msg}); expected one object per line"
                ) from None
            if not isinstance(record, dict):
                raise OcgInputError(where, "expected an object per line")
            yield where, record


def _concepts(where: str, given: object) -> list[str]:
    """A line's `concept_set` as concepts: CommonGen-Eval's part-of-speech tags (`ride_V`) dropped."""
    if not isinstance(given, list) or not all(isinstance(c, str) and c for c in given):
        raise OcgInputError(where, f"concept_set must be a list of concepts, got {given!r}")
    return sorted(c.rsplit("_", 1)[0] if c[-2:-1] == "_" else c for c in given)


def read_set_answers(
    path: Path,
    model: str | None,
    field: str = "replay.file",
    concepts: dict[str, list[str]] | None = None,
) -> dict[str, str | None]:
    """set id -> answer, from a file of answers per concept set (`set_id` or `id`; the text in
    `answer`, `raw` or `output`, as CommonGen-Eval writes it), only the lines of `model` where
    one is named; every line checked, errors name file and line. `concepts` (set id -> its
    concepts, sorted): a line's `concept_set`, where it has one, must be its set's."""
    answers: dict[str, str | None] = {}
    for where, record in _objects(path, field):
        if model is not None and record.get("model") != model:
            continue
        set_id = record.get("set_id", record.get("id"))
        if not isinstance(set_id, str):
            raise OcgInputError(where, "expected an object with a string 'set_id' (or 'id')")
        answer = record.get("answer", record.get("raw", record.get("output")))
        if answer is not None and not isinstance(answer, str):
            raise OcgInputError(where, f"the answer must be text or null, got {answer!r}")
        if set_id in answers:
            raise OcgInputError(where, f"set {set_id} appears twice")
        if concepts is not None and set_id in concepts and "concept_set" in record:
            said = _concepts(where, record["concept_set"])
            if said != concepts[set_id]:
                raise OcgInputError(
                    where,
                    f"concept_set {record['concept_set']} is not the concepts of set {set_id} "
                    f"{concepts[set_id]}: this line answers another set",
                )
        answers[set_id] = answer
    if not answers:
        raise OcgInputError(str(path), f"no line of model {model!r} (set by {field}.model)")
    return answers


class ReplayBackend(MessagePrompts):
    kind: ClassVar[str] = "replay"
    applies_grammars: ClassVar[bool] = False  # answers are replayed, not decoded

    prompts_for = MessagePrompts  # the prompt side, built first (make_prompts)

    def __init__(
        self,
        spec: ModelEntry,
        batch: BatchSize | int | None = None,
        *,
        sampling: dict | None = None,
        grammars: Mapping[str, str] | None = None,
        prompts: MessagePrompts | None = None,
        instances: pd.DataFrame | None = None,
    ):
        """`batch`: as TransformersBackend's; `sampling`: the run's (replayed answers take only
        its sample index); `grammars`: none apply (answers are replayed; make_backend refuses
        them earlier); `instances`: those it is asked (it answers by instance); `prompts` is not
        needed (its prompt side is its own)."""
        super().__init__(spec)
        self.spec = spec
        self.sampling = sampling
        self.grammars = dict(grammars or {})
        given = given_batch(spec, batch)
        self.batch_size, self.batch_size_auto = given.size, given.auto
        self.path = replay_file(spec)
        self.rows = (
            {} if instances is None else {r["instance_id"]: r for r in instances.to_dict("records")}
        )
        self.by_set = spec.replay is not None and spec.replay.key == "set_id"
        # a finished model's file may have moved: its answers are stored, so it is read only if
        # some are still to generate (generate() says so); resolved_revision() is then the card's
        self.gone = self.path is not None and not self.path.is_file()
        if self.path is not None and self.by_set and not self.gone:
            sets = {
                r["set_id"]: sorted(r["concepts"]) for r in self.rows.values() if "concepts" in r
            }
            self.set_answers = read_set_answers(
                self.path, spec.replay.model, f"models.{spec.name}.replay.file", sets
            )
            self.file_sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()
            missing = [i for i, r in self.rows.items() if r["set_id"] not in self.set_answers]
            if missing:
                raise OcgInputError(
                    str(self.path),
                    f"no answer for the concept set of {len(missing)} of the {len(self.rows)} "
                    f"instances asked (first: {missing[0]}, set {self.rows[missing[0]]['set_id']})",
                )
        elif self.path is not None and not self.gone:
            self.answers = read_answers(self.path, f"models.{spec.name}.replay.file")
            self.file_sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()
            missing = [iid for iid in self.rows if (iid, 0) not in self.answers]
            if missing:
                raise OcgInputError(
                    str(self.path),
                    f"no answer for {len(missing)} of the {len(self.rows)} "
                    f"instances asked (first: {missing[0]}); ask only for the instances the "
                    "file holds (conditions, subset_k, template_ids)",
                )
        elif self.path is None:
            self.rates = model_rates(
                spec.name, spec.seed, spec.replay.rates if spec.replay else None
            )

    def resolved_revision(self) -> str | None:
        if self.gone:  # unknown here: a run with nothing to generate keeps its card's
            return None
        if self.path is not None and self.by_set:
            return f"file sha256 {self.file_sha256}, model {self.spec.replay.model}, per set"
        if self.path is not None:
            return f"file sha256 {self.file_sha256}"
        rates = ",".join(f"{k}={v}" for k, v in sorted(self.rates.items()))
        return f"{WRITER_VERSION} seed={self.spec.seed} {rates}"

    def generate(
        self, rendered: list, instance_ids: list[str] | None = None, sample: int = 0
    ) -> list[dict]:
        if instance_ids is None or len(instance_ids) != len(rendered):
            raise ValueError("the replay backend answers by instance id: pass instance_ids")
        if self.gone:
            raise OcgInputError(
                f"models.{self.spec.name}.replay.file",
                f"{self.path}: no such file, and answers are still to generate: give the file's "
                "new place (the answers stored are kept)",
            )
        out = []
        for iid in instance_ids:
            if self.path is not None and self.by_set:  # the set's one sentence, every sample
                raw = self.set_answers[self.rows[iid]["set_id"]]
            elif self.path is not None:
                if (iid, sample) not in self.answers:
                    raise OcgInputError(
                        str(self.path),
                        f"no answer for instance {iid} sample {sample}: "
                        "a file replayed with repeated samples holds a line per sample",
                    )
                raw = self.answers[(iid, sample)]
            else:
                raw = write_answer(
                    self.rows[iid], self.spec.name, self.spec.seed, self.rates, sample
                )
            out.append(
                {
                    "raw": raw or "",
                    "finish_reason": "replay",
                    "prompt_tokens": None,
                    "completion_tokens": len((raw or "").split()),
                    "batch_size": len(rendered),
                }
            )
        return out

    def card(self) -> BackendBlock:
        """The run card's `backend`: where the answers were replayed from."""
        card = {
            "backend": self.kind,
            "source": str(self.path) if self.path else WRITER_VERSION,
            "file_sha256": getattr(self, "file_sha256", None),
            "rates": getattr(self, "rates", None),
            "resolved_revision": self.resolved_revision(),
            **self.prompt_settings(),
            "planned_batch_size": self.batch_size,
            "note": "answers replayed, not generated: no model ran",
        }
        return BackendBlock.model_validate(card)
