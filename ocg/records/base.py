"""The base of ocg's records (ocg/records/__init__.py): a frozen dataclass read from JSON with
every key checked against its field's type, and the closed vocabularies of status fields."""

from __future__ import annotations

import types
from dataclasses import MISSING, Field, fields
from enum import Enum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Union, get_args, get_origin, get_type_hints

from ..core.errors import OcgInputError
from ..core.files import read_json, write_json

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

    # Every record is a frozen dataclass whose last field is `other`: said here for the type
    # checker, which cannot see the fields of the dataclasses that derive from this class.
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    other: dict[str, Any]

    if TYPE_CHECKING:

        def __init__(self, **values: Any) -> None: ...

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
