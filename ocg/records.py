"""The records ocg keeps beside its outputs, read and written here alone: a model's run card
(run_card.json, written by generation), a score set's signature (signature.json, by scoring) and
how a report's last run went (report.json, by ocg/staging.py).

Each is a frozen dataclass whose fields are declared once: reading checks every JSON key against
its field's type, and a field typed by a `Vocabulary` holds one of a closed set of words. The JSON
keeps the keys and values it always had, so stored outputs still read; a file from before a key
existed reads with that key's default, and keys this version does not know are kept as read
(`other`). Each file carries `format_version` (inspect_ai's EvalLog does the same): a file without
it is version 1, and a version newer than this ocg's is refused rather than misread.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

from .errors import OcgInputError
from .io import read_json, write_json

_JSON_TYPES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    (int, float): "a number",
    int: "an integer",
}
VERSION_KEY = "format_version"


class Vocabulary(str, Enum):
    """A closed set of words one field of a file may hold. A member is a str equal to its word, so
    it compares, hashes and is written as the word; files written before the type read alike."""

    def __str__(self) -> str:
        return self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __format__(self, spec: str) -> str:  # the word on every Python (3.12 changed Enum's format)
        return format(self.value, spec)

    @classmethod
    def read(cls, value: Any, where: str):
        """`value` as a member, else an error naming `where` (file: field) and the words allowed."""
        try:
            return cls(value)
        except ValueError:
            raise OcgInputError(
                where, f"expected one of {', '.join(repr(m.value) for m in cls)}, got {value!r:.80}"
            ) from None


class RunStatus(Vocabulary):
    """How a model's generation went: the run card's `status`, and each of its `runs`."""

    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # killed, or a run still marked running whose process is gone
    UNKNOWN = "unknown"  # a card from before the status was recorded


class ReportStatus(Vocabulary):
    """How a report's last run stands (report.json's `state`)."""

    BUILDING = "building"
    DONE = "done"
    FAILED = "failed"


def _json_type(hint: Any) -> Any:
    """The JSON check for a field's annotation: `dict[str, str] | None` -> dict, a float -> a number."""
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    hint = get_origin(hint) or hint
    return (int, float) if hint is float else hint


class Record:
    """What the records share: JSON keys from the dataclass fields (all but `other`, what this
    version does not know, and the `DERIVED` ones), checked on reading; the format version."""

    WHAT: ClassVar[str]  # what the file is, in words (where a record read from no file is)
    FORMAT_VERSION: ClassVar[int | None] = (
        None  # written first as `format_version`; None: not versioned
    )
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = ()  # keys left out of the JSON while None
    DERIVED: ClassVar[
        tuple[str, ...]
    ] = ()  # fields held otherwise in the JSON (Signature.families)

    @classmethod
    @cache
    def json_types(cls) -> dict[str, Any]:
        """Each JSON key of the record and the type its value must have (null always allowed)."""
        hints = get_type_hints(cls)
        return {
            f.name: _json_type(hints[f.name])
            for f in fields(cls)
            if f.name not in ("other", *cls.DERIVED)
        }

    @classmethod
    def required(cls) -> set[str]:
        """The fields without a default: a file without one is refused."""
        return {
            f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
        }

    def __post_init__(self) -> None:
        for name, kind in self.json_types().items():  # a word outside a vocabulary is a bug here
            if (
                isinstance(kind, type)
                and issubclass(kind, Vocabulary)
                and getattr(self, name) is not None
            ):
                object.__setattr__(self, name, kind(getattr(self, name)))

    @classmethod
    def checked(cls, data: Any, where: str) -> dict:
        """`data` as a JSON object of this record's format version whose known keys hold their
        types (null allowed), vocabulary words as members; else an error naming file and key."""
        if not isinstance(data, dict):
            raise OcgInputError(
                where, f"expected a JSON object ({cls.WHAT}), got {type(data).__name__}"
            )
        if cls.FORMAT_VERSION is not None:
            version = data.get(VERSION_KEY, 1)  # written before the field existed: version 1
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise OcgInputError(
                    f"{where}: {VERSION_KEY}",
                    f"expected a whole number from 1, got {version!r:.80}",
                )
            if version > cls.FORMAT_VERSION:
                raise OcgInputError(
                    f"{where}: {VERSION_KEY}",
                    f"{cls.WHAT} of format version {version}, but this "
                    f"ocg reads format version {cls.FORMAT_VERSION} at most: it was written by a "
                    "newer ocg; update ocg to read it",
                )
        out = dict(data)
        for key, want in cls.json_types().items():
            value = data.get(key)
            if value is None:
                if key in cls.required():
                    raise OcgInputError(f"{where}: {key}", f"missing ({cls.WHAT} always has it)")
                continue
            if isinstance(want, type) and issubclass(want, Vocabulary):
                out[key] = want.read(value, f"{where}: {key}")
            elif not isinstance(value, want) or isinstance(value, bool):
                raise OcgInputError(
                    f"{where}: {key}", f"expected {_JSON_TYPES[want]}, got {value!r:.80}"
                )
        return out

    @classmethod
    def from_json(cls, data: Any, where: str | None = None):
        data = cls.checked(data, where or cls.WHAT)
        known = cls.json_types()
        return cls(
            **{k: v for k, v in data.items() if k in known and v is not None},
            other={k: v for k, v in data.items() if k not in known and k != VERSION_KEY},
        )

    def to_json(self) -> dict:
        version = {VERSION_KEY: self.FORMAT_VERSION} if self.FORMAT_VERSION is not None else {}
        out = {
            k: v.value if isinstance(v, Vocabulary) else v
            for k in self.json_types()
            if (v := getattr(self, k)) is not None or k not in self.WRITTEN_WHEN_SET
        }
        return {**version, **out, **self.other}

    @classmethod
    def read(cls, path: str | Path):
        return cls.from_json(read_json(path), str(path))

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())


@dataclass(frozen=True)
class RunCard(Record):
    """What a model's generations folder was asked (instances per condition, how they were
    selected), with which settings, and how each run that filled it went."""

    WHAT, FORMAT_VERSION = "a run card", 1
    WRITTEN_WHEN_SET = ("checked_utc", "records", "sampling", "constrained")

    model: str | None = None
    status: RunStatus = RunStatus.UNKNOWN
    spec: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # condition: ids sha256
    # condition: subset_k, dataset, template_ids (+ permutations, permutation_seed, permutation_rule when sampled)
    selection: dict[str, dict] = field(default_factory=dict)
    backend: dict = field(default_factory=dict)
    provenance: dict | None = None
    runs: list[dict] = field(default_factory=list)  # each with its `status` (a RunStatus)
    checked_utc: str | None = None  # when a run found everything asked already on disk
    records: dict[str, dict] | None = None  # condition: asked / present / missing / foreign
    # repeated samples (absent for greedy runs): samples, temperature, top_p, seeds, seeding rule
    sampling: dict | None = None
    # constrained conditions (absent without one): condition: library, lexicon, rule, grammar sha256s
    constrained: dict | None = None
    other: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> RunCard:
        card = super().from_json(data, where)
        return replace(
            card,
            runs=[
                {
                    **r,
                    "status": RunStatus.read(r["status"], f"{where or cls.WHAT}: runs[{i}].status"),
                }
                if isinstance(r, dict) and r.get("status") is not None
                else r
                for i, r in enumerate(card.runs)
            ],
        )

    @property
    def model_id(self) -> str | None:
        return self.settings.get("id")

    @property
    def revision(self) -> str | None:
        """The revision the weights were loaded at (None until they were)."""
        return self.settings.get("resolved_revision")

    @property
    def batch_invariance(self) -> dict | None:
        """The latest run's batch-1 check: checked, differ, share_differ, instances_differ..."""
        return next(
            (r["batch_invariance"] for r in reversed(self.runs) if r.get("batch_invariance")), None
        )

    def selection_of(self, condition: str) -> dict | None:
        """How the instance set of `condition` was chosen: recorded per condition, else the last
        run that asked for it (cards written before selections were recorded)."""
        if condition in self.selection:
            return self.selection[condition]
        for run in reversed(self.runs):
            if condition in run.get("conditions", []):
                return {
                    **{k: run.get(k) for k in ("subset_k", "dataset", "template_ids")},
                    **{k: run[k] for k in ("permutations", "permutation_seed") if k in run},
                }
        return None


@dataclass(frozen=True)
class Signature(Record):
    """How a score set was computed: per family, its key (what its values depend on) and its
    block (how they were computed, or why they are missing); the generations' completeness;
    and the checksums of the tables written with it (which make it the set's completeness marker).

    signature.json holds the fields before `families`, then one block per family scored (named
    by `metrics`), then the fields after it."""

    WHAT, FORMAT_VERSION = "a scoring signature", 1
    DERIVED = ("families",)

    metrics: list[str] = field(default_factory=list)
    inputs_sha256: str | None = None
    generations: str | None = None  # the generations folder scored
    failed_answers: str | None = None
    metric_keys: dict[str, dict] = field(default_factory=dict)
    completeness: dict | None = None  # ocg/generation/completeness.py's block
    code_sha256: dict[str, str] = field(default_factory=dict)
    flags_version: int | None = None  # the answer flags' definitions (ocg/metrics/degenerate.py)
    families: dict[str, dict] = field(
        default_factory=dict
    )  # stored as top-level keys, one per metric
    recomputed: list[str] | None = None
    reused: list[str] | None = None
    timings_s: dict[str, float] | None = None
    seconds: float | None = None
    config: dict | None = None
    provenance: dict | None = None
    files: dict[str, dict] | None = None  # table file name: bytes, sha256
    other: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> Signature:
        data = cls.checked(data, where or cls.WHAT)
        families = {m: data[m] for m in data.get("metrics") or [] if isinstance(data.get(m), dict)}
        sig = super().from_json({k: v for k, v in data.items() if k not in families}, where)
        return replace(sig, families=families)

    def to_json(self) -> dict:
        keys = list(self.json_types())  # in field order: those before `families`, then those after
        cut = [f.name for f in fields(self)].index("families")
        written = lambda part: {k: getattr(self, k) for k in part if getattr(self, k) is not None}  # noqa: E731
        return {
            VERSION_KEY: self.FORMAT_VERSION,
            **written(keys[:cut]),
            **self.families,
            **written(keys[cut:]),
            **self.other,
        }

    def family(self, name: str) -> dict:
        """The block of one scoring family ({} when it was not scored)."""
        return self.families.get(name, {})

    def status(self, name: str) -> str:
        """ok, or missing (a neural family without its checkpoint or model)."""
        return self.family(name).get("status", "ok")


@dataclass(frozen=True)
class ReportStamp(Record):
    """How a report's last run stands (report.json, ocg/staging.py): who builds it and
    since when; how it ended (the notebooks finished, or why it failed)."""

    WHAT, FORMAT_VERSION = "a report's state", 1
    WRITTEN_WHEN_SET = ("pid", "host", "started_utc", "reason", "report", "notebooks", "ended_utc")

    state: ReportStatus
    pid: int | None = None
    host: str | None = None
    started_utc: str | None = None
    reason: str | None = None  # why the run failed
    report: str | None = None  # a sweep's landing page
    notebooks: list[str] | None = None  # those finished (ocg report)
    ended_utc: str | None = None
    other: dict = field(default_factory=dict)
