"""What an OpenAI-compatible server answered, turned into a generation record's fields.

The body is decoded as the HTTP library decodes it (urllib3: gzip, deflate, and whatever else
it supports; a coding it passes through undecoded, br without brotli, is an error naming it),
after it was read whole under the request's deadline, then as text in the charset the
Content-Type names, else UTF-8: JSON is UTF-8 unless a charset says otherwise (RFC 8259), even
where a server calls it `text/plain` or `text/event-stream`, whose HTTP default, ISO-8859-1,
would garble every non-ASCII answer. The answer's fields are checked: a value of the wrong kind
(token counts that are no counts, a `usage` that is no object, a finish reason that is no text)
is stored as null and named in the record's `api_notes`, as is an API key the server echoed
into its answer (replaced by *** before anything is stored; a key shorter than 16 characters
only as the header it was sent in, `Bearer <key>`, lest answers holding that word be rewritten).
A body is bounded, read and decoded, by MAX_BODY_BYTES: a small gzip body can decompress to
gigabytes (a "gzip bomb"), so decoding stops, in urllib3's bounded reads, as soon as the text
would pass the limit.
"""

from __future__ import annotations

import codecs
import email.message
import io

import urllib3

from ...core.errors import OcgFault
from ...core.files import loads_json

EXCERPT_CHARS = 300
MAX_BODY_BYTES = 64 * 2**20  # far above any chat answer (32k tokens stream in about 7 MB)


class ApiError(OcgFault):
    """A request that retrying cannot fix (bad key, unknown model, malformed answer, other 4xx)."""


def decode_body(status: int, headers, data: bytes, notes: list[str] | None = None) -> str:
    """The body as text: content coding undone by urllib3 (at most MAX_BODY_BYTES), then the
    charset (default UTF-8); bytes invalid in it become U+FFFD, said in `notes` (api_notes)."""
    coding = headers.get("Content-Encoding")
    if coding:
        undone = _undo_coding(status, headers, data, coding)
        if isinstance(undone, str):  # an error's body that could not be undone, as shown
            return undone
        data = undone
    return _as_text(status, headers, data, notes)


def _undo_coding(status: int, headers, data: bytes, coding: str) -> bytes | str:
    """The body with its content coding undone; for an error's body that cannot be undone, text
    saying so (its status is what counts); else ApiError."""
    undone = urllib3.response.HTTPResponse.CONTENT_DECODERS  # what Accept-Encoding offered
    if {c.strip().lower() for c in coding.split(",")} - {*undone, "identity", ""}:  # passed as is
        if status != 200:  # an error's body: its status is what counts
            return f"<{len(data)} bytes in Content-Encoding {coding!r}>"
        raise ApiError(
            f"HTTP {status}: the body is in Content-Encoding {coding!r}, which cannot be undone "
            f"here (urllib3 undoes {', '.join(undone)}); refused"
        )
    try:
        decoder = urllib3.HTTPResponse(
            body=io.BytesIO(data),
            headers=dict(headers),
            status=status,
            preload_content=False,
            decode_content=True,
        )
        parts, size = [], 0
        while part := decoder.read(1 << 20):  # urllib3 >= 2.6 decompresses no more than asked
            size += len(part)
            if size > MAX_BODY_BYTES:
                raise ApiError(
                    f"HTTP {status}: the body ({len(data)} bytes as Content-Encoding {coding!r}) "
                    f"decompresses to more than {MAX_BODY_BYTES} bytes; refused"
                )
            parts.append(part)
        return b"".join(parts)
    except urllib3.exceptions.DecodeError as exc:
        if status != 200:  # an error's body: its status is what counts
            return data.decode("utf-8", errors="replace")
        raise ApiError(
            f"HTTP {status}: the body cannot be decoded as Content-Encoding {coding!r} ({exc})"
        ) from None


def _as_text(status: int, headers, data: bytes, notes: list[str] | None) -> str:
    """The bytes in the charset the Content-Type names, else UTF-8 (a BOM dropped)."""
    message = email.message.Message()
    message["content-type"] = headers.get("Content-Type", "")
    charset = message.get_content_charset()
    try:
        codecs.lookup(charset or "utf-8")
    except LookupError:
        raise ApiError(f"HTTP {status}: the body's charset {charset!r} is unknown") from None
    encoding = charset or "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        text = data.decode(encoding, errors="replace")
    if notes is not None:  # the answer is stored, not silently: what was lost is said
        bad = text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd")
        notes.append(
            f"the body is not valid {charset or 'UTF-8 (no charset named another)'}: "
            f"{bad} invalid byte sequence(s) stored as U+FFFD"
        )
    return text


SECRET_MIN_CHARS = (
    16  # a shorter key ("test", "jump") is a word answers hold: only its header echo is secret
)


def secret(key: str) -> tuple[str, str]:
    """(what of `key` is replaced, by what): a key of SECRET_MIN_CHARS or more wherever it stands;
    a shorter one only as the header ocg sent, `Bearer <key>`, lest every answer holding that
    word be rewritten (a server started with {key} refuses short keys: server.py)."""
    return (key, "***") if len(key) >= SECRET_MIN_CHARS else (f"Bearer {key}", "Bearer ***")


def scrub(text: str, key: str) -> str:
    """`text` with the key replaced by ***; before any cut, so no part of the key is left."""
    return text.replace(*secret(key)) if key else text


def _count(value, name: str, notes: list[str], key: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    notes.append(f"{name} {scrub(repr(value), key)[:40]} is not a token count; stored as null")
    return None


def _text(value, name: str, notes: list[str], key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    notes.append(f"{name} {scrub(repr(value), key)[:40]} is not text; stored as null")
    return None


def _fields(raw: str, finish, usage, *, model, fingerprint, key: str) -> dict:
    notes: list[str] = []
    if usage is not None and not isinstance(usage, dict):
        notes.append(
            f"usage is a {type(usage).__name__}, not an object; token counts stored as null"
        )
        usage = {}
    usage = usage or {}
    return {
        "raw": raw,
        "finish_reason": _text(finish, "finish_reason", notes, key),
        "prompt_tokens": _count(usage.get("prompt_tokens"), "prompt_tokens", notes, key),
        "completion_tokens": _count(
            usage.get("completion_tokens"), "completion_tokens", notes, key
        ),
        "response_model": _text(model, "model", notes, key),
        "system_fingerprint": _text(fingerprint, "system_fingerprint", notes, key),
        "api_notes": notes,
    }


def parse_completion(status: int, content_type: str, body: str, key: str = "") -> dict:
    """The answer of a chat completion: plain JSON, or an event stream of chunks (servers that
    stream even when asked not to). Anything else is an ApiError with status and excerpt (and
    the notes) without the key."""
    excerpt = scrub(body, key)[:EXCERPT_CHARS].replace("\n", " ")
    if "text/event-stream" in content_type or body.lstrip().startswith("data:"):
        return _parse_stream(status, body, excerpt, key)
    try:
        payload = loads_json(body)
    except ValueError:
        raise ApiError(
            f"HTTP {status} but the body is not JSON ({content_type or 'no content type'}): "
            f"{excerpt!r}"
        ) from None
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ApiError(f"HTTP {status}: no choices in the answer: {excerpt!r}")
    message = choices[0].get("message")
    if not isinstance(
        message, dict
    ):  # e.g. a /completions answer ({"text": ...}): not an empty answer
        what = "no message" if message is None else f"a message that is a {type(message).__name__}"
        raise ApiError(
            f"HTTP {status}: {what} in the first choice, not a chat completion: {excerpt!r}"
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ApiError(
            f"HTTP {status}: message content is a {type(content).__name__}, not text: {excerpt!r}"
        )
    out = _fields(
        content or "",
        choices[0].get("finish_reason"),
        payload.get("usage"),
        model=payload.get("model"),
        fingerprint=payload.get("system_fingerprint"),
        key=key,
    )
    if content is None:  # a refusal or a tool call: stored as an empty answer, not silently
        out["api_notes"].append("message content is null; stored as an empty answer")
    return out


def _parse_stream(status: int, body: str, excerpt: str, key: str) -> dict:
    parts, finish, model, usage, fingerprint, seen = [], None, None, None, None, False
    for line in body.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = loads_json(data)
        except ValueError:
            raise ApiError(
                f"HTTP {status}: a streamed chunk is not JSON: {scrub(data, key)[:EXCERPT_CHARS]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise ApiError(
                f"HTTP {status}: a streamed chunk is a {type(chunk).__name__}: {excerpt!r}"
            )
        model = chunk.get("model", model)
        fingerprint = chunk.get("system_fingerprint", fingerprint)
        usage = chunk.get("usage") or usage
        choices = chunk.get("choices") or []
        for choice in choices if isinstance(choices, list) else []:
            seen = True
            delta = (
                (choice.get("delta") or choice.get("message") or {})
                if isinstance(choice, dict)
                else {}
            )
            text = delta.get("content") if isinstance(delta, dict) else None
            if text is not None and not isinstance(text, str):
                raise ApiError(
                    f"HTTP {status}: streamed content is a {type(text).__name__}: {excerpt!r}"
                )
            parts.append(text or "")
            finish = (choice.get("finish_reason") if isinstance(choice, dict) else None) or finish
    if not seen:
        raise ApiError(f"HTTP {status}: an event stream without choices: {excerpt!r}")
    return _fields("".join(parts), finish, usage, model=model, fingerprint=fingerprint, key=key)


def scrub_answer(out: dict, key: str) -> dict:
    """The answer with the key replaced by *** in every text field, and a note where it was."""
    if not key:
        return out
    held = [
        name for name, value in out.items() if isinstance(value, str) and secret(key)[0] in value
    ]
    for name in held:
        out[name] = scrub(out[name], key)
    out["api_notes"] = [scrub(note, key) for note in out.get("api_notes", [])]
    if held:
        out["api_notes"] = [
            *out.get("api_notes", []),
            f"the server echoed the API key into {', '.join(held)}; replaced by ***",
        ]
    return out
