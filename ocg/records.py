"""The two records ocg keeps beside its outputs, read and written here alone: a model's run card
(run_card.json, written by generation) and a score set's signature (signature.json, by scoring).

Each is a frozen dataclass with `from_json`/`to_json`. The JSON keeps the keys and values it
always had, so stored outputs still read; a file from before a key existed reads with that key's
default, and keys this version does not know are kept as read (`other`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import OcgInputError
from .io import read_json, write_json

_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", (int, float): "a number"}


def _checked(data: Any, where: str, what: str, types: dict[str, type | tuple]) -> dict:
    """`data` as a JSON object whose known keys hold their types (null allowed), else an error."""
    if not isinstance(data, dict):
        raise OcgInputError(where, f"expected a JSON object ({what}), got {type(data).__name__}")
    for key, want in types.items():
        value = data.get(key)
        if value is not None and (not isinstance(value, want) or isinstance(value, bool)):
            raise OcgInputError(f"{where}: {key}", f"expected {_JSON_TYPES[want]}, got {value!r:.80}")
    return data


@dataclass(frozen=True)
class RunCard:
    """What a model's generations folder was asked (instances per condition, how they were
    selected), with which settings, and how each run that filled it went."""
    model: str | None = None
    status: str = "unknown"  # running, complete, failed or interrupted
    spec: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # condition: ids sha256
    # condition: subset_k, dataset, template_ids (+ permutations, permutation_seed, permutation_rule when sampled)
    selection: dict[str, dict] = field(default_factory=dict)
    backend: dict = field(default_factory=dict)
    provenance: dict | None = None
    runs: list[dict] = field(default_factory=list)
    checked_utc: str | None = None  # when a run found everything asked already on disk
    records: dict[str, dict] | None = None  # condition: asked / present / missing / foreign
    # repeated samples (absent for greedy runs): samples, temperature, top_p, seeds, seeding rule
    sampling: dict | None = None
    # constrained conditions (absent without one): condition: library, lexicon, rule, grammar sha256s
    constrained: dict | None = None
    other: dict = field(default_factory=dict)

    _TYPES = {"model": str, "status": str, "spec": dict, "settings": dict, "instances": dict, "selection": dict,
              "backend": dict, "provenance": dict, "runs": list, "checked_utc": str, "records": dict,
              "sampling": dict, "constrained": dict}
    _WRITTEN_WHEN_SET = ("checked_utc", "records", "sampling", "constrained")

    @classmethod
    def from_json(cls, data: Any, where: str = "run card") -> RunCard:
        data = _checked(data, where, "a run card", cls._TYPES)
        known = {k: v for k, v in data.items() if k in cls._TYPES and v is not None}
        return cls(**known, other={k: v for k, v in data.items() if k not in cls._TYPES})

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "other"}
        return {**{k: v for k, v in out.items() if v is not None or k not in self._WRITTEN_WHEN_SET},
                **self.other}

    @classmethod
    def read(cls, path: str | Path) -> RunCard:
        return cls.from_json(read_json(path), str(path))

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())

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
        return next((r["batch_invariance"] for r in reversed(self.runs) if r.get("batch_invariance")), None)

    def selection_of(self, condition: str) -> dict | None:
        """How the instance set of `condition` was chosen: recorded per condition, else the last
        run that asked for it (cards written before selections were recorded)."""
        if condition in self.selection:
            return self.selection[condition]
        for run in reversed(self.runs):
            if condition in run.get("conditions", []):
                return {**{k: run.get(k) for k in ("subset_k", "dataset", "template_ids")},
                        **{k: run[k] for k in ("permutations", "permutation_seed") if k in run}}
        return None


# signature.json: these keys, then one block per family scored (named by `metrics`), then the rest.
_SIGNATURE_HEAD = {"metrics": list, "inputs_sha256": str, "generations": str, "failed_answers": str,
                   "metric_keys": dict, "completeness": dict, "code_sha256": dict, "flags_version": int}
_SIGNATURE_TAIL = {"recomputed": list, "reused": list, "timings_s": dict, "seconds": (int, float),
                   "config": dict, "provenance": dict, "files": dict}


@dataclass(frozen=True)
class Signature:
    """How a score set was computed: per family, its key (what its values depend on) and its
    block (how they were computed, or why they are missing); the generations' completeness;
    and the checksums of the tables written with it (which make it the set's completeness marker)."""
    metrics: list[str] = field(default_factory=list)
    inputs_sha256: str | None = None
    generations: str | None = None  # the generations folder scored
    failed_answers: str | None = None
    metric_keys: dict[str, dict] = field(default_factory=dict)
    completeness: dict | None = None  # ocg/generation/completeness.py's block
    code_sha256: dict[str, str] = field(default_factory=dict)
    flags_version: int | None = None  # the answer flags' definitions (ocg/metrics/degenerate.py)
    families: dict[str, dict] = field(default_factory=dict)  # stored as top-level keys, one per metric
    recomputed: list[str] | None = None
    reused: list[str] | None = None
    timings_s: dict[str, float] | None = None
    seconds: float | None = None
    config: dict | None = None
    provenance: dict | None = None
    files: dict[str, dict] | None = None  # table file name: bytes, sha256
    other: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str = "signature") -> Signature:
        types = {**_SIGNATURE_HEAD, **_SIGNATURE_TAIL}
        data = _checked(data, where, "a scoring signature", types)
        metrics = data.get("metrics") or []
        families = {m: data[m] for m in metrics if isinstance(data.get(m), dict)}
        known = {k: v for k, v in data.items() if k in types and v is not None}
        return cls(**known, families=families,
                   other={k: v for k, v in data.items() if k not in types and k not in families})

    def to_json(self) -> dict:
        head = {k: getattr(self, k) for k in _SIGNATURE_HEAD}
        tail = {k: getattr(self, k) for k in _SIGNATURE_TAIL}
        return {**{k: v for k, v in head.items() if v is not None}, **self.families,
                **{k: v for k, v in tail.items() if v is not None}, **self.other}

    @classmethod
    def read(cls, path: str | Path) -> Signature:
        return cls.from_json(read_json(path), str(path))

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())

    def family(self, name: str) -> dict:
        """The block of one scoring family ({} when it was not scored)."""
        return self.families.get(name, {})

    def status(self, name: str) -> str:
        """ok, or missing (a neural family without its checkpoint or model)."""
        return self.family(name).get("status", "ok")
