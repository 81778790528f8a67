"""A block inside a record (the run card's settings, its backend, each of its runs...): a frozen
pydantic model whose keys are typed where this ocg writes them, whose keys it does not know are
kept (`other`), and which is written with the keys it was read or built with, in their order.

A block read and written again is the same JSON, whatever its keys and their order: a key is
written when it was read or given (null included), never because its field has a default, so a
block from before a key existed stays without it, and a default only says how an absent key reads.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_serializer, model_validator

B = TypeVar("B", bound="Block")


def as_json(value: Any) -> Any:
    """`value` as JSON holds it: blocks and records as their JSON, a vocabulary's word as a string,
    inside dicts and lists too; anything else as it is."""
    if isinstance(value, BaseModel) and hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value


class Block(BaseModel):
    """What the blocks share: every field optional (its default: how an absent key reads), each
    key checked for its JSON type when read, the keys this version does not know kept as extras,
    and the keys written in the order read or given (`to_json`)."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)

    _keys: tuple[str, ...] = PrivateAttr(default=())  # the keys read or given, in their order

    @model_validator(mode="wrap")
    @classmethod
    def _order_kept(cls, data: Any, handler: Any) -> Any:
        block = handler(data)
        if isinstance(data, dict) and block is not data:
            block._keys = tuple(data)
        return block

    def written_keys(self) -> list[str]:
        """The keys as written: those read or given, in their order (then any a pydantic
        `model_copy(update=...)` added)."""
        added = [k for k in type(self).model_fields if k in self.model_fields_set]
        return list(dict.fromkeys([*self._keys, *added, *(self.__pydantic_extra__ or {})]))

    def has(self, key: str) -> bool:
        """Whether the block holds `key` (null included): a key absent from an older card is not
        the same as one recorded as null."""
        return key in self.written_keys()

    def recorded(self, key: str, default: Any = None) -> Any:
        """The value under `key` (a field's or a kept key's), `default` where the block has no
        such key: for readers that go over keys by name, or tell an absent key from a null one."""
        return self._value(key) if self.has(key) else default

    def _value(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        return (self.__pydantic_extra__ or {})[key]

    @property
    def other(self) -> dict[str, Any]:
        """The keys this version does not know, as read."""
        return dict(self.__pydantic_extra__ or {})

    def __bool__(self) -> bool:
        """False when the block holds no key, as the empty JSON object it is read from."""
        return bool(self.written_keys())

    def to_json(self) -> dict[str, Any]:
        """The block as written: its keys in order, with their values as JSON holds them."""
        return {k: as_json(self._value(k)) for k in self.written_keys()}

    @model_serializer(mode="plain")
    def _serialized(self) -> dict[str, Any]:
        return self.to_json()

    def replace(self: B, **changes: Any) -> B:
        """A copy with `changes`, checked as a new block is: a key it holds keeps its place, a new
        one comes last (as a dict's update)."""
        return type(self).model_validate(
            {**{k: self._value(k) for k in self.written_keys()}, **changes}
        )
