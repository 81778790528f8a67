"""The base of every parameter file's model, and pydantic's errors told in ocg's own words.

Each model forbids unknown keys, takes YAML values as they are (strict: a YAML `true` is never a
number, `"3"` never an int) and refuses NaN and infinities. `validate` checks a mapping against a
model and raises the first problem as an OcgInputError naming `where.section.field`, with the
texts the hand-written checks gave before (tests/test_hostile*.py pin them).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import annotated_types
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    ValidationError,
    WithJsonSchema,
    WrapValidator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from ..core.errors import OcgInputError, shown


class ConfigModel(BaseModel):
    """A section of a parameter file: every key known, every value of its type; frozen, as the
    object validation returns is what the code reads (never a dict rebuilt from it)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        allow_inf_nan=False,
        protected_namespaces=(),
        use_attribute_docstrings=True,  # each field's docstring is its description in the schema
    )


@dataclass(frozen=True)
class Says:
    """What a wrong value is told it should be (instead of a text built from its type)."""

    expected: str


def _keep_int(value: Any, handler: Callable) -> Any:
    checked = handler(value)
    return value if type(value) is int else checked  # 120 stays 120 in run cards, not 120.0


KeepInt = WrapValidator(_keep_int)
"""A number field's marker: a finite number, an int kept an int (`Annotated[float, Field(ge=..),
KeepInt]`)."""


def checked(check: Callable[[str, Any], Any]) -> AfterValidator:
    """A hand-written check (where, value) run by pydantic: its OcgInputError's `where` (empty, or a
    suffix such as `.key` or `[2]`) is added to the field's address."""

    def run(value: Any) -> Any:
        try:
            check("", value)
        except OcgInputError as exc:
            raise PydanticCustomError(
                "ocg", "{problem}", {"problem": exc.problem, "at": exc.where}
            ) from None
        return value

    return AfterValidator(run)


def auto_or_positive(where: str, value: Any) -> None:
    if value != "auto" and not (
        isinstance(value, int) and not isinstance(value, bool) and value >= 1
    ):
        raise OcgInputError(where, f"got {shown(value)}; expected a positive integer or auto")


# A positive integer, or `auto`: ocg picks one where the run starts (e.g. a models entry's batch_size).
AutoOrPositive = Annotated[
    Any,
    checked(auto_or_positive),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]}),
]


def at(where: str, key: str) -> str:
    """The address of a key: `file: section.key`, or `file: key` at a file's top level."""
    if key.startswith("["):
        return f"{where.rstrip(':')}{key}"
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def _metadata(annotation: Any) -> list:
    """Every Annotated marker and bound inside a type (Optional and list arguments included)."""
    found = list(getattr(annotation, "__metadata__", ()))
    for arg in typing.get_args(annotation):
        found += _metadata(arg)
    return found


def _leaves(annotation: Any) -> list:
    """The plain types a field's annotation is made of (Annotated unwrapped, None kept)."""
    if typing.get_origin(annotation) is Annotated:
        return _leaves(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) for t in _leaves(a)]
    return [annotation]


_NAMES = {int: "int", float: "number", str: "str", bool: "bool", dict: "mapping", list: "list"}


def _kind(leaf: Any) -> str:
    origin = typing.get_origin(leaf) or leaf
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return "mapping"
    return _NAMES.get(origin, getattr(origin, "__name__", str(origin)))


@dataclass(frozen=True)
class _Field:
    """What an error message needs to know of the field it is about."""

    kinds: list
    nullable: bool
    says: str | None
    bounds: dict
    nonempty: bool

    @classmethod
    def of(cls, annotation: Any, constraints: list) -> _Field:
        leaves = _leaves(annotation)
        marks = _metadata(annotation) + constraints
        bounds = {
            name: getattr(m, name)
            for m in marks
            for name in ("ge", "gt", "le")
            if isinstance(m, getattr(annotated_types, name.title()))
        }
        return cls(
            kinds=[t for t in leaves if t is not type(None)],
            nullable=type(None) in leaves,
            says=next((m.expected for m in marks if isinstance(m, Says)), None),
            bounds=bounds,
            nonempty=any(isinstance(m, annotated_types.MinLen) for m in marks),
        )

    @property
    def or_null(self) -> str:
        return " or null" if self.nullable else ""

    def minimum_text(self) -> str:
        low, exclusive = self.bounds.get("gt", self.bounds.get("ge")), "gt" in self.bounds
        is_int = self.kinds and self.kinds[0] is int
        if is_int and low == 1 and not exclusive:
            return "a positive integer"
        return f"{'an integer' if is_int else 'a number'} {'>' if exclusive else '>='} {low:g}"

    def items(self) -> Any:
        """A list's item type (None for a field that is no list)."""
        if typing.get_origin(self.kinds[0]) is not list:
            return None
        return _leaves(typing.get_args(self.kinds[0])[0])[0]

    def list_text(self) -> str:
        return f"a {'non-empty ' if self.nonempty else ''}list of {_kind(self.items())}"


def file_fields(model: type[BaseModel]) -> list[str]:
    """The fields a file may write (not those ocg fills in itself, such as an entry's name)."""
    return [
        name
        for name, info in model.model_fields.items()
        # SkipJsonSchema is a class at run time, an alias of Annotated to type checkers
        if not any(isinstance(m, SkipJsonSchema) for m in info.metadata)  # type: ignore[misc]
    ]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    return next(
        (t for t in _leaves(annotation) if isinstance(t, type) and issubclass(t, BaseModel)), None
    )


def _walk(model: type[BaseModel], loc: tuple) -> tuple[_Field | None, tuple, Any, tuple]:
    """The deepest model field on an error's location, the part of `loc` that names it (list
    indices and a plain mapping's keys below it belong to its value), the type at `loc`, and
    that part as it is written (`templates.0`, `models[1]`)."""
    field: _Field | None = None
    path: tuple = ()
    current: Any = model
    names: tuple[str, ...] = ()
    for i, key in enumerate(loc):
        owner = _model_in(current)
        containers = [t for t in _leaves(current) if typing.get_origin(t) in (dict, list)]
        if owner is not None and key in owner.model_fields:
            info = owner.model_fields[key]
            current = info.annotation
            field, path = _Field.of(current, info.metadata), loc[: i + 1]
        elif owner is None and containers:
            is_list = typing.get_origin(containers[0]) is list
            current = typing.get_args(containers[0])[-1]  # a mapping's values, a list's items
            key = f"[{key}]" if is_list else str(key)
        else:
            break
        names += (str(key),)
    names += tuple(map(str, loc[len(names) :]))
    return field, path or loc, current, names


def _value_at(raw: Any, path: tuple) -> Any:
    for key in path:
        try:
            raw = raw[key]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def _address(where: str, names: tuple) -> str:
    for name in names:
        where = at(where, name)
    return where


T = TypeVar("T")


def _named(found: T | None, what: str) -> T:
    """The field or model a pydantic error is about (None: an error no field or model holds
    fails as reading an attribute of None would)."""
    if found is None:
        raise AttributeError(f"pydantic's error names no {what}")
    return found


def _problem(error: ErrorDetails, field: _Field | None, value: Any) -> str:
    kind, shown_value = error["type"], shown(value)
    says = field.says if field else None
    if kind == "missing":
        return "missing"
    if kind == "literal_error":
        leaves = _named(field, "field").kinds
        choices = ", ".join(str(c) for leaf in leaves for c in typing.get_args(leaf))
        return f"got {shown_value}; expected {says or 'one of ' + choices}"
    if kind in ("greater_than", "greater_than_equal"):
        return f"got {shown_value}; expected {says or _named(field, 'field').minimum_text()}"
    if kind == "less_than_equal":
        return f"got {shown_value}; expected at most {_named(field, 'field').bounds['le']!r}"
    if kind == "finite_number":
        return f"got {shown_value}; expected a finite number"
    if field is not None and field.kinds and field.items() not in (None, Any):
        return f"got {shown_value}; expected {says or field.list_text() + field.or_null}"
    if says:
        return f"got {shown_value}; expected {says}"
    kinds = " or ".join(dict.fromkeys(_kind(k) for k in field.kinds)) if field else "a value"
    return f"expected {kinds}{field.or_null if field else ''}, got {shown_value}"


def _first(errors: list[ErrorDetails]) -> ErrorDetails:
    """The error the hand-written checks met first: an unknown key before any value."""
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def validate(model: type[BaseModel], raw: Any, where: str) -> Any:
    """`raw` as a `model`, or an OcgInputError naming the first problem (`where`: `file:` for a
    file's top level, `file: section` below it)."""
    if not isinstance(raw, dict):
        fields = ", ".join(file_fields(model))
        raise OcgInputError(where.rstrip(":"), f"expected a mapping of {fields}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        error = _first(exc.errors())
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        _, _, current, names = _walk(model, loc[:-1])
        owner = _model_in(current)
        known = sorted(file_fields(owner)) if owner else []
        raise OcgInputError(_address(where, (*names, str(loc[-1]))), f"unknown key; known: {known}")
    field, path, current, names = _walk(model, loc)
    if error["type"] == "model_type" and path != loc:  # a mapping's value that is no mapping
        fields = ", ".join(file_fields(_named(_model_in(current), "model")))
        raise OcgInputError(_address(where, names), f"expected a mapping of {fields}")
    names = names[: len(path)]  # the field's own address: list items belong to its value
    if error["type"] == "ocg":
        raise OcgInputError(_address(where, names) + error["ctx"]["at"], error["ctx"]["problem"])
    raise OcgInputError(_address(where, names), _problem(error, field, _value_at(raw, path)))
