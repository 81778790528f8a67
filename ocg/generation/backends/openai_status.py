"""What an OpenAI-compatible API's answer other than 200 means: a retry (429 with its
Retry-After, 5xx), or an error that stops the run at once, worded for the user (a refused key, an
unknown model, a rejected system role)."""

from __future__ import annotations

import email.utils
import re
import time

from ...config.models_file import ModelEntry
from ...core.errors import OcgFault
from .openai_answer import EXCERPT_CHARS, ApiError, scrub


class Retryable(OcgFault):
    """A failed attempt worth retrying; `wait` is the server's Retry-After, if it gave one."""

    def __init__(self, what: str, wait: float | None = None):
        super().__init__(what)
        self.wait = wait


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def is_system_role_rejection(status: int, body: str) -> bool:
    return (
        status == 400
        and re.search(r"system", body, re.I) is not None
        and re.search(r"role|not supported|unsupported|not allowed|invalid", body, re.I) is not None
    )


def refusal(resp, body: str, url: str, key: str, spec: ModelEntry) -> Exception:
    """The exception a non-200 answer `resp` (its decoded `body`) raises: Retryable, or an ApiError
    without the key."""
    status = resp.status_code
    excerpt = scrub(body, key)[:EXCERPT_CHARS].replace("\n", " ")
    if status in (401, 403):
        if not spec.api.key_env:
            return ApiError(
                f"{status} from {url}: it wants a key; name its variable in "
                f"models.{spec.name}.api.key_env"
            )
        return ApiError(f"{status} from {url}: the key in ${spec.api.key_env} was refused")
    if status == 404:
        return ApiError(f"404 from {url}: unknown endpoint or model {spec.id!r}: {excerpt}")
    if is_system_role_rejection(status, body):
        return ApiError(
            f"400 from {url}: the model rejects the system role ({excerpt}); set "
            f"`system_mode: folded` in its entry (models.{spec.name}) to put the "
            "system prompt in front of the first user turn"
        )
    if status == 429:
        return Retryable("HTTP 429", retry_after_seconds(resp.headers.get("Retry-After")))
    if status >= 500:
        return Retryable(f"HTTP {status}")
    return ApiError(f"{status} from {url}: {excerpt}")
