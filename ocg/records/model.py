"""The base of ocg's records (ocg/records/__init__.py): a frozen pydantic model read from JSON with
every known key checked against its field's JSON type, the keys it does not know kept as extras
(`other`), and the closed vocabularies of status fields."""

from __future__ import annotations

import types
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, model_serializer, model_validator

from ..core.errors import OcgInputError
from ..core.files import read_json, write_json
from .block import as_json

VERSION_KEY = "format_version"
Number = int | float  # a JSON number, kept as written (3 stays 3)
V = TypeVar("V", bound="Vocabulary")
R = TypeVar("R", bound="RecordModel")
_JSON_WORDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    float: "a number",
    int: "an integer",
}


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
    def words(cls) -> str:
        return ", ".join(repr(m.value) for m in cls)

    @classmethod
    def read(cls: type[V], value: Any, where: str) -> V:
        """`value` as a member, else an error naming `where` (file: field) and the words allowed."""
        try:
            return cls(value)
        except ValueError:
            raise OcgInputError(
                where, f"expected one of {cls.words()}, got {value!r:.80}"
            ) from None


def _kind(hint: Any) -> Any:
    """The JSON kind of a field's annotation: `dict[str, Any] | None` -> dict, `int | float` -> float."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        hint = float if float in args else args[0]
    if get_origin(hint) is not None and get_origin(hint) is not Union:
        origin = get_origin(hint)
        if origin.__name__ == "Annotated" or not isinstance(origin, type):
            return _kind(get_args(hint)[0])
        return origin
    return hint


def _model_of(hint: Any) -> type[BaseModel] | None:
    """The pydantic model a field's annotation holds (`Block | None` -> Block), else None."""
    kind = _kind(hint)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def _item(hint: Any) -> Any:
    """What a list or dict annotation holds (`list[RunEntry] | None` -> RunEntry)."""
    if get_origin(hint) in (Union, types.UnionType):
        members = [a for a in get_args(hint) if a is not type(None)]
        hint = members[0] if len(members) == 1 else None
    args = get_args(hint)
    return args[-1] if get_origin(hint) in (list, dict) and args else None


def _located(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, Any]:
    """The path of the key an error's `loc` names inside `model` (`runs[0].status`) and its
    field's annotation (None where the path leaves the fields: a kept key, a union's member)."""
    name, hint = "", None
    at: type[BaseModel] | None = model
    for part in loc:
        if at is not None:  # in a model: a field's name
            if not (isinstance(part, str) and part in at.model_fields):
                break
            name, hint = f"{name}.{part}" if name else part, at.model_fields[part].annotation
        else:  # in a list (an index) or a dict (a key)
            container, item = _kind(hint), _item(hint)
            if item is not None and container is list and isinstance(part, int):
                name = f"{name}[{part}]"
            elif item is not None and container is dict and isinstance(part, str):
                name = f"{name}.{part}"
            else:
                break
            hint = item
        at = _model_of(hint)
    return name or (str(loc[0]) if loc else ""), hint


class RecordModel(BaseModel):
    """What the records share: JSON keys from the fields, each checked for its JSON type when read
    (null reads as the field's default); the keys this version does not know kept, in order, as
    extras (`other`) and written last; `format_version` checked when read and written first."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)

    WHAT: ClassVar[str]  # what the file is, in words (where a record read from no file is)
    FORMAT_VERSION: ClassVar[int | None] = None  # written first; None: not versioned
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = ()  # keys left out of the JSON while None

    @property
    def other(self) -> dict[str, Any]:
        """The keys this version does not know, as read."""
        return dict(self.__pydantic_extra__ or {})

    @model_validator(mode="before")
    @classmethod
    def _known_keys_set(cls, data: Any) -> Any:
        """A null known key reads as its default; the format version is no field."""
        if not isinstance(data, dict):
            return data
        return {
            k: v
            for k, v in data.items()
            if k != VERSION_KEY and not (v is None and k in cls.model_fields)
        }

    @classmethod
    def check_version(cls, data: Any, where: str) -> None:
        """`data` a JSON object of a format version this ocg reads, else an error naming it."""
        if not isinstance(data, dict):
            raise OcgInputError(
                where, f"expected a JSON object ({cls.WHAT}), got {type(data).__name__}"
            )
        if cls.FORMAT_VERSION is None:
            return
        version = data.get(VERSION_KEY, 1)  # written before the field existed: version 1
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise OcgInputError(
                f"{where}: {VERSION_KEY}", f"expected a whole number from 1, got {version!r:.80}"
            )
        if version > cls.FORMAT_VERSION:
            raise OcgInputError(
                f"{where}: {VERSION_KEY}",
                f"{cls.WHAT} of format version {version}, but this "
                f"ocg reads format version {cls.FORMAT_VERSION} at most: it was written by a "
                "newer ocg; update ocg to read it",
            )

    @classmethod
    def _input_error(cls, exc: ValidationError, where: str) -> OcgInputError:
        """The first problem pydantic met, in the words the records always used (a key inside a
        block named by its path: `runs[0].status`)."""
        error = exc.errors()[0]
        name, hint = _located(cls, error["loc"])
        value = error.get("input")
        if error["type"] == "missing":
            return OcgInputError(f"{where}: {name}", f"missing ({cls.WHAT} always has it)")
        kind = _kind(hint) if hint is not None else None
        if isinstance(kind, type) and issubclass(kind, Vocabulary):
            return OcgInputError(
                f"{where}: {name}", f"expected one of {kind.words()}, got {value!r:.80}"
            )
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            kind = dict  # a block: a JSON object
        word = _JSON_WORDS.get(kind, str(error["msg"])) if isinstance(kind, type) else error["msg"]
        return OcgInputError(
            f"{where}: {name}" if name else where, f"expected {word}, got {value!r:.80}"
        )

    @classmethod
    def from_json(cls: type[R], data: Any, where: str | None = None) -> R:
        where = where or cls.WHAT
        cls.check_version(data, where)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise cls._input_error(exc, where) from None

    def _fields_json(self, names: list[str]) -> dict[str, Any]:
        return {
            k: as_json(v)
            for k in names
            if (v := getattr(self, k)) is not None or k not in self.WRITTEN_WHEN_SET
        }

    def _version_json(self) -> dict[str, Any]:
        return {VERSION_KEY: self.FORMAT_VERSION} if self.FORMAT_VERSION is not None else {}

    @model_serializer(mode="plain")
    def _serialized(self) -> dict[str, Any]:
        return self.to_json()

    def to_json(self) -> dict[str, Any]:
        """The JSON as written: the format version, the fields in order (those in
        WRITTEN_WHEN_SET only when set), then the keys kept as read."""
        return {
            **self._version_json(),
            **self._fields_json(list(type(self).model_fields)),
            **self.other,
        }

    def replace(self: R, **changes: Any) -> R:
        """A copy with `changes`, checked as a new record is."""
        return type(self)(
            **{**self.other, **{k: getattr(self, k) for k in type(self).model_fields}, **changes}
        )

    @classmethod
    def read(cls: type[R], path: str | Path) -> R:
        return cls.from_json(read_json(path), str(path))

    def write(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())
