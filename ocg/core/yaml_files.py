"""Reading parameter files: YAML with limits (no key twice, no merge keys, bounded nesting and
aliases), UTF-8 text, and the `extends:` chains of models and sweep files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from .errors import OcgInputError, shown

YAML_MAX_DEPTH = 100  # collections inside collections: parameter files need a handful
YAML_ALIAS_BUDGET = 10_000  # values that aliases (*name) may add, all together


class LimitedLoader(yaml.SafeLoader):
    """A safe YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last),
    a merge key (`<<`), nesting deeper than YAML_MAX_DEPTH (Python's recursion would fail first)
    and aliases that would add more than YAML_ALIAS_BUDGET values (an "alias bomb": a few lines
    that expand to billions of values, each checked and shown)."""

    def __init__(self, stream):
        super().__init__(stream)
        self.depth, self.expanded, self.open_anchors, self.sizes = 0, 0, set(), {}

    def compose_node(self, parent, index):
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent):
            self._count_alias(event, anchor)
            return super().compose_node(parent, index)
        self.depth += 1
        if self.depth > YAML_MAX_DEPTH:
            raise ComposerError(
                None, None, f"nested deeper than {YAML_MAX_DEPTH} levels", event.start_mark
            )
        self.open_anchors.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1
            self.open_anchors.discard(anchor)

    def _count_alias(self, event, anchor) -> None:
        """An alias adds the values it stands for to the budget; one inside its own anchor loops."""
        if anchor in self.open_anchors:
            raise ComposerError(
                None,
                None,
                f"alias *{anchor} refers to a collection that holds it (a recursive alias)",
                event.start_mark,
            )
        if anchor in self.anchors:
            self.expanded += self.size(self.anchors[anchor])
        if self.expanded > YAML_ALIAS_BUDGET:
            raise ComposerError(
                None,
                None,
                f"aliases (*name) expand to over {YAML_ALIAS_BUDGET:,} values; write the values out",
                event.start_mark,
            )

    def size(self, node) -> int:
        """How many values `node` stands for, aliases inside it expanded (memoised: shared)."""
        if id(node) not in self.sizes:
            value = node.value if isinstance(node.value, list) else []
            self.sizes[id(node)] = 1 + sum(
                self.size(n)
                for item in value
                for n in (item if isinstance(item, tuple) else (item,))
            )
        return self.sizes[id(node)]


def _mapping_error(node, problem: str, key_node) -> ConstructorError:
    return ConstructorError(
        "while constructing a mapping", node.start_mark, problem, key_node.start_mark
    )


def _construct_mapping(loader, node, deep=False):
    """A mapping whose keys are each given once, none a merge key or a list or mapping."""
    seen: dict[Any, int] = {}  # key: the line it was first on
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise _mapping_error(
                node,
                "found a merge key (<<): merge keys are not supported; write the keys out",
                key_node,
            )
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:  # a list or mapping as a key: no Python key (PyYAML's own words)
            raise _mapping_error(node, "found unhashable key", key_node) from None
        if key in seen:
            raise _mapping_error(
                node, f"found duplicate key {shown(key)} (first on line {seen[key] + 1})", key_node
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


LimitedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _construct_timestamp(loader, node):
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:  # PyYAML builds datetime.date(2025, 2, 30) and lets its ValueError out
        error = ConstructorError(None, None, "no calendar date", node.start_mark)
        error.no_such_date = node  # type: ignore[attr-defined]  # a plain scalar that YAML reads as a date but no calendar has
        raise error from None


LimitedLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def _address(node, target, names=()) -> tuple | None:
    """The keys and indices that lead from `node` to the node `target` (None: not below it)."""
    if node is target:
        return names
    if isinstance(node, yaml.MappingNode):
        pairs = [(str(k.value), v) for k, v in node.value]
    elif isinstance(node, yaml.SequenceNode):
        pairs = [(f"[{i}]", v) for i, v in enumerate(node.value)]
    else:
        return None
    for name, child in pairs:
        found = _address(child, target, (*names, name))
        if found is not None:
            return found
    return None


def _no_such_date(path: str | Path, text: str, node) -> OcgInputError:
    """The error naming the field of a date no calendar has (read again, without constructing)."""
    root = yaml.compose(text, Loader=LimitedLoader)  # noqa: S506 - a SafeLoader subclass
    names = _address(root, _same_node(root, node)) or ()
    field = "".join(n if n.startswith("[") or not i else f".{n}" for i, n in enumerate(names))
    value = node.value
    return OcgInputError(
        f"{path}: {field}" if field else str(path),
        f"got {value} (line {node.start_mark.line + 1}), which YAML reads as a date but no "
        f"calendar has; write a real date YYYY-MM-DD, or quote it ('{value}') if it is text",
    )


def _same_node(root, node):
    """The node of `root` (a second reading of the same text) that starts where `node` does."""
    stack = [root]
    while stack:
        here = stack.pop()
        if here.start_mark.index == node.start_mark.index and isinstance(here, yaml.ScalarNode):
            return here
        if isinstance(here, yaml.MappingNode):
            stack += [n for pair in here.value for n in pair]
        elif isinstance(here, yaml.SequenceNode):
            stack += here.value
    return None


def parse_yaml(text: str) -> Any:
    """YAML text read with read_yaml's limits (a yaml.YAMLError where it breaks one)."""
    return yaml.load(text, Loader=LimitedLoader)  # noqa: S506 - a SafeLoader subclass


def read_text(path: str | Path) -> str:
    """A text file as UTF-8; anything else is an error naming the file and the byte offset."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OcgInputError(
            str(path), f"not UTF-8 text: byte {exc.start} is 0x{data[exc.start]:02x}"
        ) from None


def read_yaml(path: str | Path) -> Any:
    """A parameter file's contents; unreadable or invalid YAML (or a key given twice) is an error
    naming the file and line."""
    try:
        text = read_text(path)
    except OSError as exc:
        raise OcgInputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        if hasattr(exc, "no_such_date"):
            raise _no_such_date(path, text, exc.no_such_date) from None
        raise OcgInputError(str(path), f"invalid YAML: {exc}") from None


def read_extends_chain(path: str | Path, what: str, limit: int = 50) -> list[tuple[Path, Any]]:
    """[(file, its YAML)] from `path` through each file it `extends:` (a path relative to the file
    that names it), the last one extending none. A circle, a missing file or a chain longer than
    `limit` is an error naming the file and its `extends` (a loop: never Python's recursion limit)."""
    chain = [(Path(path), read_yaml(path))]
    while isinstance(chain[-1][1], dict) and (base := chain[-1][1].get("extends")) is not None:
        here = chain[-1][0]
        if not isinstance(base, str) or not base.strip():
            raise OcgInputError(
                f"{here}: extends", f"got {base!r}; expected the path of another {what} file"
            )
        base_path = (here.parent / base).resolve()
        if base_path in {p.resolve() for p, _ in chain}:
            raise OcgInputError(f"{here}: extends", f"{base} extends this file again (a circle)")
        if not base_path.is_file():
            raise OcgInputError(f"{here}: extends", f"no such {what} file: {base_path}")
        if len(chain) >= limit:
            raise OcgInputError(
                f"{here}: extends", f"more than {limit} {what} files in one chain; shorten it"
            )
        chain.append((base_path, read_yaml(base_path)))
    return chain
