"""What a server started for a run answers: the readiness poll of GET /models (401/403 stops
at once, with what to fix), the models it lists, its version, and why `transformers serve` may
answer 500. Each request is bounded as a whole (http_client.py) and scrubbed of the key."""

from __future__ import annotations

from pathlib import Path

import requests
import urllib3

from ...core.errors import OcgFault
from ...core.files import loads_json
from ..backends.http_client import BodyTooLong, DeadlineExceeded, broken_answer, fetch, session
from ..backends.openai_answer import ApiError, decode_body, scrub


class ServerError(OcgFault):
    """The server could not be started, or stopped answering."""


POLL_S = 2.0  # one readiness poll, /version: each bounded as a whole (http_client.py)
POLL_BYTES = 16 * 2**20  # a models list, a version: far less


def _auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"} if key else {}


def get_bounded(url: str, key: str, seconds: float) -> tuple[requests.Response, str]:
    """GET `url` within `seconds` of wall clock: (the answer, its body as text); a body past
    POLL_BYTES or one that cannot be decoded is an ApiError, a late one DeadlineExceeded."""
    with session() as s:
        try:
            resp, raw = fetch(s, "GET", url, seconds, POLL_BYTES, headers=_auth(key))
        except BodyTooLong as exc:
            raise ApiError(str(exc)) from None
    return resp, decode_body(resp.status_code, resp.headers, raw)


def version(base_url: str, key: str) -> str | None:
    """What the server says its version is, where it says (vLLM and TGI answer /version)."""
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    try:
        resp, text = get_bounded(f"{root}/version", key, 2.0)
    except (
        requests.RequestException,
        DeadlineExceeded,
        ApiError,
        OSError,
        urllib3.exceptions.HTTPError,
    ):
        return None
    return scrub(text, key).strip()[:200] if resp.status_code == 200 else None  # scrubbed, then cut


def listed_models(text: str, key: str) -> list:
    """The ids /models lists (at most 20), without the key; none where the answer is not the usual shape."""
    try:
        data = loads_json(text)  # nested past the parser's depth: malformed, like any
    except ValueError:
        return []
    items = data.get("data") if isinstance(data, dict) else None
    ids = (
        [m.get("id") for m in items if isinstance(m, dict)][:20] if isinstance(items, list) else []
    )
    return [scrub(i, key) if isinstance(i, str) else i for i in ids]


def poll(
    base_url: str, key: str, where: str, key_env: str | None, seconds: float
) -> tuple[tuple[requests.Response, str] | None, str | None]:
    """((the answer, its text), if 200; what else was answered), within `seconds`: 401/403 stops,
    with what to fix."""
    try:
        resp, text = get_bounded(f"{base_url}/models", key, seconds)
    except DeadlineExceeded as exc:
        return None, str(exc)
    except ApiError as exc:  # a body too long, or in a coding that cannot be undone
        return None, scrub(str(exc), key)
    except (requests.RequestException, OSError, urllib3.exceptions.HTTPError) as exc:
        return None, scrub(broken_answer(exc) or "", key) or None  # not listening yet: no answer
    if resp.status_code in (401, 403):
        fix = (
            f"the key in ${key_env} was refused"
            if key
            else f"it wants a key: name its variable in {where.rsplit('.', 1)[0]}.key_env (and pass it with {{key}})"
        )
        raise ServerError(
            f"the server answers GET {base_url}/models with HTTP {resp.status_code}: {fix}"
        )
    if resp.status_code != 200:
        return None, f"HTTP {resp.status_code}: {scrub(text, key)[:200]!r}"
    return (resp, text), None


def startup_hint(shown: list[str], last_answer: str) -> str:
    """Why `transformers serve` answers 500 to every poll, where that is the likely cause: on
    transformers 5 its GET /v1/models lists the local hub cache, and fails while that folder is
    missing (docs/developing.md, "Two stacks")."""
    if (
        Path(shown[0]).name != "transformers"
        or shown[1:2] != ["serve"]
        or not last_answer.startswith("HTTP 500")
    ):
        return ""
    from huggingface_hub import constants  # the folder as the hub (and so the server) reads it

    cache = Path(constants.HF_HUB_CACHE)
    if cache.is_dir():
        return ""
    return (
        f"; transformers serve answers that while its hub cache folder {cache} does not exist: "
        "create it, or set HF_HUB_CACHE to an existing folder"
    )
