"""Is a model loadable here without hanging? Local directory, local hub cache, or a reachable hub."""

from __future__ import annotations

import os
import socket

HUB_HOST = ("huggingface.co", 443)


def hub_reachable(timeout: float = 3.0) -> bool:
    """A 3-second TCP probe of the hub (respects HF_HUB_OFFLINE); never hangs."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() not in ("0", "", "false", "no"):
        return False
    try:
        with socket.create_connection(HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


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
