"""An inference server started for one generation run: vLLM, SGLang, TGI, llama.cpp, or
`transformers serve`, anything that serves the OpenAI chat API.

A model entry's `api.server` names the command (`{id}`, `{port}`, `{model_dir}` and `{key}` are
filled in, nothing else: other braces, e.g. a JSON `--hf-overrides`, are the command's own); the
server is started in its own process group, polled until it answers `GET /models` with 200
(within `startup_timeout_s` of wall clock: each poll is bounded as a whole, so an answer
trickled a byte at a time cannot hold it past that; a process that exits first is an error with
its log's tail, a 401/403 stops at once, another status is named when time runs out), and
stopped when the run ends, fails or is cancelled (SIGTERM from Slurm included): SIGTERM to the
group, then SIGKILL. Its output goes to `server.log` beside the generations.

The key (the variable `api.key_env` names) is sent with every poll, as with every request, and
`{key}` hands it to the server (`vllm serve --api-key {key}`; the command is split without a
shell, so `$KEY` would stay literal). It is never written: the run card and every error show the
command with `***`, and the server's output is copied into its log with the key replaced. A key
shorter than 16 characters is refused for {key} (api_backend.py): it could be an ordinary word in
the server's output and answers, which ocg would either leave in or rewrite (api_answer.secret).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
import urllib3

from ..errors import OcgInputError
from ..io import loads_json, refuse_link
from .api_answer import ApiError, decode_body, scrub, secret
from .http_client import BodyTooLong, DeadlineExceeded, broken_answer, fetch, session


class ServerError(RuntimeError):
    """The server could not be started, or stopped answering."""


POLL_S = 2.0  # one readiness poll, /version: each bounded as a whole (http_client.py)
POLL_BYTES = 16 * 2**20  # a models list, a version: far less

_PLACEHOLDER = re.compile(r"\{(id|port|model_dir|key)\}")


def server_command(command: str, fields: dict) -> list[str]:
    """The command's words with the placeholders {id}, {port}, {model_dir} and {key} filled in."""
    return [
        _PLACEHOLDER.sub(lambda m: str(fields[m.group(1)]), part) for part in shlex.split(command)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _tail(path: Path, n: int = 1500) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _get(url: str, key: str, seconds: float) -> tuple[object, str]:
    """GET `url` within `seconds` of wall clock: (the answer, its body as text); a body past
    POLL_BYTES or one that cannot be decoded is an ApiError, a late one DeadlineExceeded."""
    with session() as s:
        try:
            resp, raw = fetch(s, "GET", url, seconds, POLL_BYTES, headers=_auth(key))
        except BodyTooLong as exc:
            raise ApiError(str(exc)) from None
    return resp, decode_body(resp.status_code, resp.headers, raw)


def _version(base_url: str, key: str) -> str | None:
    """What the server says its version is, where it says (vLLM and TGI answer /version)."""
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    try:
        resp, text = _get(f"{root}/version", key, 2.0)
    except (
        requests.RequestException,
        DeadlineExceeded,
        ApiError,
        OSError,
        urllib3.exceptions.HTTPError,
    ):
        return None
    return scrub(text, key).strip()[:200] if resp.status_code == 200 else None  # scrubbed, then cut


def _stop(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _copy_scrubbed(source, log, key: str) -> None:
    """The server's output, line by line, into its log with the key replaced."""
    old, new = (part.encode() for part in secret(key))
    try:
        for line in iter(source.readline, b""):
            log.write(line.replace(old, new))
            log.flush()
    except (OSError, ValueError):  # the log closed under a straggler still writing: stop copying
        pass


def _listed_models(text: str, key: str) -> list:
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


def _poll(
    base_url: str, key: str, where: str, key_env: str | None, seconds: float
) -> tuple[object, str | None]:
    """((the answer, its text), if 200; what else was answered), within `seconds`: 401/403 stops,
    with what to fix."""
    try:
        resp, text = _get(f"{base_url}/models", key, seconds)
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


def _startup_hint(shown: list[str], last_answer: str) -> str:
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


@contextmanager
def running_server(spec, log_path: Path, key: str = "") -> Iterator[dict]:
    """Start the entry's server, wait until it answers, yield what the run card records; stop it."""
    server = spec.api["server"]
    port = server.get("port") or free_port()
    where = f"models.{spec.name}.api.server"
    if port_in_use(port):
        raise OcgInputError(f"{where}.port", f"port {port} is already in use on this machine")
    fields = {"id": spec.id, "port": port, "model_dir": server.get("model_dir") or spec.id}
    command = server_command(server["command"], {**fields, "key": key})
    shown = server_command(server["command"], {**fields, "key": "***"})  # what cards and errors say
    base_url = spec.api["base_url"].replace("{port}", str(port)).rstrip("/")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    refuse_link(
        log_path
    )  # the log is appended to: never another file (O_NOFOLLOW: nor one linked since)
    log = os.fdopen(
        os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666), "ab"
    )
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE if key else log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:  # no such program, or not executable
        log.close()
        raise OcgInputError(
            f"{where}.command",
            f"cannot start {shown[0]!r} ({exc.strerror}); "
            "expected a program on PATH or a path to one",
        ) from None
    copier = threading.Thread(target=_copy_scrubbed, args=(proc.stdout, log, key), daemon=True)
    if key:
        copier.start()
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(
        signal.SIGTERM, lambda *_: sys.exit(143)
    )  # a cancelled job still stops its server
    try:
        deadline = time.monotonic() + float(server.get("startup_timeout_s", 600))
        listed, other = None, None
        while listed is None:
            if proc.poll() is not None:
                if key:
                    copier.join(5)  # the log's tail complete
                raise ServerError(
                    f"the server exited with status {proc.returncode} before answering "
                    f"({' '.join(shown)}); log {log_path}:\n{_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                last = f" (its last answer: {other}{_startup_hint(shown, other)})" if other else ""
                raise ServerError(
                    f"the server did not answer {base_url}/models with HTTP 200 within "
                    f"{server.get('startup_timeout_s', 600)} s{last}; log {log_path}:\n{_tail(log_path)}"
                )
            poll_s = round(
                min(POLL_S, max(deadline - time.monotonic(), 0.1)), 1
            )  # the last poll ends by the deadline
            listed, now = _poll(base_url, key, where, spec.api.get("key_env"), poll_s)
            other = now or other
            if listed is None:
                time.sleep(0.5)
        yield {
            "command": shown,
            "base_url": base_url,
            "pid": proc.pid,
            "version": _version(base_url, key),
            "http_server": scrub(listed[0].headers.get("server") or "", key) or None,
            "models_listed": _listed_models(listed[1], key),
            "log": str(log_path),
        }
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(proc)
        if key:
            copier.join(5)
        log.close()


@contextmanager
def server_for_run(
    spec, backend, model_dir: Path, log_name: str = "server.log"
) -> Iterator[dict | None]:
    """The model entry's inference server (api.server), started for this run's generation (or a
    judge's scoring, scoring/judging.py) and attached to its backend; None where the entry names
    no server."""
    if spec.backend != "openai" or not spec.api.get("server"):
        yield None
        return
    with running_server(backend.spec, model_dir / log_name, backend.key) as info:
        try:
            backend.attach_server(info)
        except ApiError as exc:
            raise ServerError(
                f"the server answers /models but not a first chat request for model "
                f"{spec.id!r} (unknown to it?): {exc}; log {info['log']}"
            ) from None
        yield info
