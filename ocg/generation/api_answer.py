"""What an OpenAI-compatible server answered, turned into a generation record's fields.

The body is decoded as the HTTP library decodes it (urllib3: gzip, deflate, and whatever else
it supports), after it was read whole under the request's deadline, then as text in the charset
the Content-Type names, else UTF-8: JSON is UTF-8 unless a charset says otherwise (RFC 8259),
even where a server calls it `text/plain` or `text/event-stream`, whose HTTP default,
ISO-8859-1, would garble every non-ASCII answer. The answer's fields are checked: a value of
the wrong kind (token counts that are no counts, a `usage` that is no object, a finish reason
that is no text) is stored as null and named in the record's `api_notes`, as is an API key the
server echoed into its answer (replaced by *** before anything is stored).
"""

from __future__ import annotations

import codecs
import email.message
import io
import json

import urllib3

EXCERPT_CHARS = 300


class ApiError(RuntimeError):
    """A request that retrying cannot fix (bad key, unknown model, malformed answer, other 4xx)."""


def decode_body(status: int, headers, data: bytes) -> str:
    """The body as text: content coding undone by urllib3, then the charset (default UTF-8)."""
    if headers.get("Content-Encoding"):
        try:
            data = urllib3.HTTPResponse(body=io.BytesIO(data), headers=dict(headers), status=status,
                                        preload_content=False, decode_content=True).read()
        except urllib3.exceptions.DecodeError as exc:
            if status != 200:  # an error's body: its status is what counts
                return data.decode("utf-8", errors="replace")
            raise ApiError(f"HTTP {status}: the body cannot be decoded as Content-Encoding "
                           f"{headers.get('Content-Encoding')!r} ({exc})") from None
    message = email.message.Message()
    message["content-type"] = headers.get("Content-Type", "")
    charset = message.get_content_charset()
    try:
        codecs.lookup(charset or "utf-8")
    except LookupError:
        raise ApiError(f"HTTP {status}: the body's charset {charset!r} is unknown") from None
    return data.decode(charset or "utf-8-sig", errors="replace")


def _count(value, name: str, notes: list[str]) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    notes.append(f"{name} {value!r:.40} is not a token count; stored as null")
    return None


def _text(value, name: str, notes: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    notes.append(f"{name} {value!r:.40} is not text; stored as null")
    return None


def _fields(raw: str, finish, usage, model, fingerprint) -> dict:
    notes: list[str] = []
    if usage is not None and not isinstance(usage, dict):
        notes.append(f"usage is a {type(usage).__name__}, not an object; token counts stored as null")
        usage = {}
    usage = usage or {}
    return {"raw": raw, "finish_reason": _text(finish, "finish_reason", notes),
            "prompt_tokens": _count(usage.get("prompt_tokens"), "prompt_tokens", notes),
            "completion_tokens": _count(usage.get("completion_tokens"), "completion_tokens", notes),
            "response_model": _text(model, "model", notes),
            "system_fingerprint": _text(fingerprint, "system_fingerprint", notes), "api_notes": notes}


def parse_completion(status: int, content_type: str, body: str) -> dict:
    """The answer of a chat completion: plain JSON, or an event stream of chunks (servers that
    stream even when asked not to). Anything else is an ApiError with status and excerpt."""
    excerpt = body[:EXCERPT_CHARS].replace("\n", " ")
    if "text/event-stream" in content_type or body.lstrip().startswith("data:"):
        return _parse_stream(status, body, excerpt)
    try:
        payload = json.loads(body)
    except ValueError:
        raise ApiError(f"HTTP {status} but the body is not JSON ({content_type or 'no content type'}): "
                       f"{excerpt!r}") from None
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ApiError(f"HTTP {status}: no choices in the answer: {excerpt!r}")
    message = choices[0].get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        raise ApiError(f"HTTP {status}: message content is a {type(content).__name__}, not text: {excerpt!r}")
    return _fields(content or "", choices[0].get("finish_reason"), payload.get("usage"), payload.get("model"),
                   payload.get("system_fingerprint"))


def _parse_stream(status: int, body: str, excerpt: str) -> dict:
    parts, finish, model, usage, fingerprint, seen = [], None, None, None, None, False
    for line in body.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ApiError(f"HTTP {status}: a streamed chunk is not JSON: {data[:EXCERPT_CHARS]!r}") from None
        if not isinstance(chunk, dict):
            raise ApiError(f"HTTP {status}: a streamed chunk is a {type(chunk).__name__}: {excerpt!r}")
        model = chunk.get("model", model)
        fingerprint = chunk.get("system_fingerprint", fingerprint)
        usage = chunk.get("usage") or usage
        choices = chunk.get("choices") or []
        for choice in choices if isinstance(choices, list) else []:
            seen = True
            delta = (choice.get("delta") or choice.get("message") or {}) if isinstance(choice, dict) else {}
            text = delta.get("content") if isinstance(delta, dict) else None
            if text is not None and not isinstance(text, str):
                raise ApiError(f"HTTP {status}: streamed content is a {type(text).__name__}: {excerpt!r}")
            parts.append(text or "")
            finish = (choice.get("finish_reason") if isinstance(choice, dict) else None) or finish
    if not seen:
        raise ApiError(f"HTTP {status}: an event stream without choices: {excerpt!r}")
    return _fields("".join(parts), finish, usage, model, fingerprint)


def scrub_answer(out: dict, key: str) -> dict:
    """The answer with the key replaced by *** in every text field, and a note where it was."""
    if not key:
        return out
    held = [name for name, value in out.items() if isinstance(value, str) and key in value]
    for name in held:
        out[name] = out[name].replace(key, "***")
    if held:
        out["api_notes"] = [*out.get("api_notes", []),
                            f"the server echoed the API key into {', '.join(held)}; replaced by ***"]
    return out
