"""Writing files so that a crash never leaves a half-written result behind."""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def make_temp(
    parent: str | Path, prefix: str, suffix: str = ".tmp", directory: bool = False
) -> Path:
    """A new uniquely named file (or directory) in `parent`, created with the modes any other
    file gets (0666 / 0777 less the umask), unlike tempfile's private 0600 / 0700."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            if directory:
                os.mkdir(path, 0o777)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: no free temporary name for {prefix}*{suffix}")


def follow_umask(path: str | Path, executable: bool = False) -> None:
    """Give a file that a library wrote privately (safetensors writes 0600) the mode any other
    file gets: 0666 (0777 for a script) less the umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if executable else 0o666) & ~mask)


def refuse_link(*paths: str | Path, fix: str = "remove the link (its target is untouched)") -> None:
    """ocg deletes, clears, renames and overwrites only what it made: a path it would change that
    is a symbolic link is an error naming it, before anything is touched (its target never is)."""
    from .errors import OcgInputError

    for path in paths:
        if os.path.islink(path):
            raise OcgInputError(
                str(path),
                f"a symbolic link (to {os.readlink(path)}) stands where ocg "
                "clears, renames or writes its own folder or file; ocg never "
                f"changes anything through a link it did not make: {fix}",
            )


def naming(exc: OSError, path: str | Path) -> OSError:
    """The same error naming the file the user knows (not a temporary one, or none at all)."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path` (`.<name>.<random>.tmp`); on success it replaces
    `path` in one rename. A kill leaves at most that temporary file (see remove_temps)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp_path = make_temp(path.parent, f".{path.name}.")
    except OSError as exc:
        raise naming(exc, path) from exc
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as exc:
        if exc.filename not in (None, str(tmp_path)):
            raise
        raise naming(exc, path) from exc
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


TEMP_NAME = re.compile(
    r"\..+\.[a-z0-9_]{8,12}\.tmp"
)  # ours: 12 hex digits; tempfile's: 8 characters


def remove_temps(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed atomic writes left in `folder` (call it only while
    holding the folder's writer lock)."""
    stray = [p for p in Path(folder).glob(".*.tmp") if TEMP_NAME.fullmatch(p.name) and p.is_file()]
    for p in stray:
        p.unlink(missing_ok=True)
    return stray


def write_json(path: str | Path, obj: Any) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
    return Path(path)


def write_json_when_full(path: str | Path, obj: Any) -> Path:
    """write_json; where the disk is full (no room for the temporary copy), the compact JSON
    over the old file's own bytes, padded with spaces, so a failure can still be recorded."""
    try:
        return write_json(path, obj)
    except OSError as exc:
        if exc.errno != errno.ENOSPC or not Path(path).is_file() or Path(path).is_symlink():
            raise
        data = json.dumps(obj, separators=(",", ":"), default=str).encode()
        size = Path(path).stat().st_size
        if len(data) + 1 > size:
            raise
        with open(path, "r+b") as fh:  # overwriting allocated bytes needs no free space
            fh.write(data + b"\n" + b" " * (size - len(data) - 1))
            fh.flush()
            os.fsync(fh.fileno())
        return Path(path)


def write_parquet(path: str | Path, df) -> Path:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    return Path(path)


YAML_MAX_DEPTH = 100  # collections inside collections: parameter files need a handful
YAML_ALIAS_BUDGET = 10_000  # values that aliases (*name) may add, all together


def _yaml_loader():
    """A safe YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last),
    a merge key (`<<`), nesting deeper than YAML_MAX_DEPTH (Python's recursion would fail first)
    and aliases that would add more than YAML_ALIAS_BUDGET values (an "alias bomb": a few lines
    that expand to billions of values, each checked and shown)."""
    import yaml
    from yaml.composer import ComposerError

    from .errors import shown

    class Loader(yaml.SafeLoader):
        def __init__(self, stream):
            super().__init__(stream)
            self.depth, self.expanded, self.open_anchors, self.sizes = 0, 0, set(), {}

        def compose_node(self, parent, index):
            event = self.peek_event()
            anchor = getattr(event, "anchor", None)
            if isinstance(event, yaml.AliasEvent):
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
                        f"aliases (*name) expand to over {YAML_ALIAS_BUDGET:,} "
                        "values; write the values out",
                        event.start_mark,
                    )
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

    def construct_mapping(loader, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found a merge key (<<): merge keys are not supported; write the keys out",
                    key_node.start_mark,
                )
            key = loader.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:  # a list or mapping as a key: no Python key (PyYAML's own words)
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                ) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {shown(key)} (first on line {seen[key] + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


def read_text(path: str | Path) -> str:
    """A text file as UTF-8; anything else is an error naming the file and the byte offset."""
    from .errors import OcgInputError

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
    import yaml

    from .errors import OcgInputError

    try:
        text = read_text(path)
    except OSError as exc:
        raise OcgInputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        raise OcgInputError(str(path), f"invalid YAML: {exc}") from None


def read_extends_chain(path: str | Path, what: str, limit: int = 50) -> list[tuple[Path, Any]]:
    """[(file, its YAML)] from `path` through each file it `extends:` (a path relative to the file
    that names it), the last one extending none. A circle, a missing file or a chain longer than
    `limit` is an error naming the file and its `extends` (a loop: never Python's recursion limit)."""
    from .errors import OcgInputError

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


def parse_yaml(text: str) -> Any:
    """YAML text read with read_yaml's limits (a yaml.YAMLError where it breaks one)."""
    import yaml

    return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass


def loads_json(data: str | bytes) -> Any:
    """json.loads, where nesting deeper than Python's parser follows (100,000 brackets) is
    malformed JSON like any other (a JSONDecodeError, not a RecursionError)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError(
            "nested too deeply (brackets inside brackets past what Python's parser follows)", "", 0
        ) from None


def read_json(path: str | Path) -> Any:
    """A JSON file (UTF-8; a byte-order mark is skipped, as it is in signature.json); anything
    else is an error naming the file (and line and column)."""
    from .errors import OcgInputError

    try:
        return loads_json(
            Path(path).read_bytes().decode("utf-8-sig")
        )  # a BOM skipped; UTF-16 is no UTF-8
    except UnicodeDecodeError as exc:
        raise OcgInputError(str(path), f"not UTF-8 text: byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise OcgInputError(
            str(path), f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
