"""The hand-written checks of a models-file entry's fields that no type says (ids, dates, URLs,
server commands, GenerationConfig overrides, replay rates), run by the models' validators."""

from __future__ import annotations

import math
import re

from ..core.errors import OcgInputError, shown
from ..weights.embedded import EMBEDDED_MODELS, EMBEDDED_PREFIX

RATE_KEYS = ("reorder", "drop", "inflect", "repeat", "degenerate")
RATES_SCHEMA = {  # check_rates, as the JSON Schema says it
    "properties": {k: {"type": "number", "minimum": 0, "maximum": 1} for k in RATE_KEYS},
    "additionalProperties": False,
}
# Settings that only stop generation or select tokens in ways a user may want to change on
# purpose; anything else a GenerationConfig knows is accepted too, after a type check.
_NEVER_OVERRIDE = {
    "max_new_tokens",
    "do_sample",
    "num_beams",
    "eos_token_id",
    "pad_token_id",
    "bos_token_id",
}


def check_id(where: str, value: str) -> None:
    if not value.strip():
        raise OcgInputError(where, "empty id")
    name = value[len(EMBEDDED_PREFIX) :]
    if value.startswith(EMBEDDED_PREFIX) and name not in EMBEDDED_MODELS:
        raise OcgInputError(where, f"no embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")


def generation_defaults() -> dict:
    """Every GenerationConfig setting with the value generate() uses when nobody sets it.
    transformers 5 leaves them None on a fresh config and fills them in inside generate() from
    a table of its own (4.x's fresh config holds them, and has no such table)."""
    from transformers import GenerationConfig

    values = GenerationConfig().to_dict()
    table = getattr(GenerationConfig, "_get_default_generation_params", None)
    values.update({k: v for k, v in (table() if table else {}).items() if values.get(k) is None})
    return values


def _fits_default(value: object, default: object) -> bool:
    if default is None or isinstance(value, type(default)):
        return True
    return isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)


def check_generation_overrides(where: str, overrides: dict) -> None:
    known = generation_defaults()
    for key, value in overrides.items():
        if key in _NEVER_OVERRIDE:
            raise OcgInputError(
                f"{where}.{key}",
                "set through its own field (max_new_tokens, "
                "decoding) or fixed by ocg (greedy: do_sample false, one beam)",
            )
        if key not in known:
            raise OcgInputError(f"{where}.{key}", "not a transformers GenerationConfig setting")
        if not _fits_default(value, known[key]):
            raise OcgInputError(
                f"{where}.{key}", f"got {shown(value)}; expected {type(known[key]).__name__}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise OcgInputError(f"{where}.{key}", f"got {shown(value)}; expected a finite number")


# An http(s) URL: a host (a name, or an IPv6 address in brackets), a port 1-65535 or {port}
# (api.server's), then a path; no user:password@, no whitespace or control characters.
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[^\s\x00-\x1f\x7f-\x9f@/?#:\[\]]+)"
URL_PATTERN = (
    rf"^https?://{_HOST}(?::(?:{_PORT}|\{{port\}}))?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$(?!\n)"
)
_URL = re.compile(URL_PATTERN)


def check_url(where: str, value: str) -> None:
    """URL_PATTERN, each way to miss it told: requests would send credentials instead of the key
    (and cards keep URLs); a port outside 1-65535 or a broken host fails only when asked."""
    from urllib.parse import urlsplit

    if not value.startswith(("http://", "https://")):
        raise OcgInputError(where, f"got {shown(value)}; expected an http(s) URL")
    if re.search(r"[\s\x00-\x1f\x7f-\x9f]", value):
        raise OcgInputError(where, f"got {shown(value)}; holds whitespace or a control character")
    try:
        parts = urlsplit(value.replace("{port}", "1"))
        port = parts.port
    except ValueError as exc:
        raise OcgInputError(where, f"got {shown(value)}; not a URL ({exc})") from None
    if "@" in parts.netloc:
        raise OcgInputError(
            where,
            "holds credentials (user:password@host); they would replace the key and be "
            "written into the run card: put the key in the variable api.key_env names",
        )
    if port is not None and not 1 <= port <= 65535:
        raise OcgInputError(where, f"got {shown(value)}; expected a port from 1 to 65535")
    if not _URL.fullmatch(value):
        raise OcgInputError(
            where, f"got {shown(value)}; expected an http(s) URL: host[:port][/path]"
        )


def check_rates(where: str, rates: dict) -> None:
    for key, value in rates.items():
        if key not in RATE_KEYS:
            raise OcgInputError(f"{where}.{key}", f"unknown rate; known: {list(RATE_KEYS)}")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise OcgInputError(f"{where}.{key}", f"expected number, got {shown(value)}")
        if not math.isfinite(value):
            raise OcgInputError(f"{where}.{key}", f"got {shown(value)}; expected a finite number")
        if value < 0:
            raise OcgInputError(f"{where}.{key}", f"got {shown(value)}; expected a number >= 0")
        if value > 1:
            raise OcgInputError(
                f"{where}.{key}", f"got {shown(value)}; expected a rate between 0 and 1"
            )


def check_command(where: str, command: str) -> None:
    import shlex

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise OcgInputError(where, f"cannot be split into words as a shell would ({exc})") from None
    if not words:
        raise OcgInputError(where, "empty; expected the command that starts the server")
