"""Is a model loadable here without hanging? Local directory, local hub cache, or a reachable hub."""

from __future__ import annotations

import hashlib
import os
import re
import socket
from functools import lru_cache
from pathlib import Path

HUB_HOST = ("huggingface.co", 443)


def hub_offline() -> bool:
    """HF_HUB_OFFLINE (else TRANSFORMERS_OFFLINE) read as huggingface_hub reads it: offline for
    1, ON, YES, TRUE in any case, online for anything else ("off", "0", "2"), but read now, not
    when huggingface_hub was imported (a sweep task sets it before its kernels start)."""
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    return value is not None and value.upper() in constants.ENV_VARS_TRUE_VALUES


def hub_reachable(timeout: float = 3.0) -> bool:
    """A 3-second TCP probe of the hub (respects HF_HUB_OFFLINE); never hangs."""
    if hub_offline():
        return False
    try:
        with socket.create_connection(HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def is_hub_id(name: str | None) -> bool:
    """'org/name' or 'name'; an embedded model, a path (absolute, ./, ../, deeper) or a folder is not."""
    from .embedded import EMBEDDED_PREFIX

    return (
        name is not None
        and name != ""
        and not name.startswith((EMBEDDED_PREFIX, "/", ".", "~"))
        and name.count("/") <= 1
        and not os.path.isdir(name)
    )


def is_pinned(revision: str | None) -> bool:
    """A full commit hash pins the weights; a branch (`main`) or a tag can move under the same name."""
    return revision is not None and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def pin_note(revision: str | None) -> str:
    """How a listing marks a hub revision."""
    return (
        "pinned commit"
        if is_pinned(revision)
        else f"{'a branch' if revision == 'main' else 'a branch or tag'}, not pinned: its commit can move"
    )


def cached_locally(model: str) -> bool:
    """The model's config is in the local hub cache (so loading needs no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # noqa: BLE001 - an odd id is simply "not cached"
        return False


def unavailable_reason(model: str) -> str | None:
    """None when `model` can be loaded here, else why not (without waiting on a dead network)."""
    if os.path.isdir(model) or cached_locally(model):
        return None
    if hub_reachable():
        return None
    return f"{model} is not a local directory, not in the local hub cache, and the model hub is unreachable"


def revision(model: str, ref: str | None = None) -> str | None:
    """What identifies the weights `model` names: a local directory's content hash, else the hub
    commit in the local hub cache that `ref` (a branch, tag or commit; default main) points at;
    None while it has not been downloaded."""
    if os.path.isdir(model):
        files = sorted(
            p for p in Path(model).rglob("*") if p.is_file() and not p.name.startswith(".")
        )
        stats = tuple(
            (str(p.relative_to(model)), p.stat().st_size, p.stat().st_mtime_ns) for p in files
        )
        return "sha256:" + _directory_digest(str(Path(model).resolve()), stats)
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model, "config.json", revision=ref)
    except Exception:  # noqa: BLE001 - an odd id is simply "not cached"
        return None
    return Path(found).parent.name if isinstance(found, str) else None


def loaded_revision(config, model: str) -> str | None:
    """The revision of weights just loaded: the hub commit transformers records on the config
    (4.x does; 5.x not when loading offline from the cache), else the cache's, else a local
    directory's content hash."""
    return (None if os.path.isdir(model) else getattr(config, "_commit_hash", None)) or revision(
        model
    )


@lru_cache(maxsize=16)
def _directory_digest(root: str, stats: tuple) -> str:
    """sha256 of a directory's files (names and contents); `stats` (names, sizes, mtimes) keys the memo."""
    h = hashlib.sha256()
    for name, _, _ in stats:
        h.update(f"{name}\n".encode())
        with open(os.path.join(root, name), "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()
