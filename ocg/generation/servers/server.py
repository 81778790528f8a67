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
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import OcgInputError
from ...core.files import refuse_link
from ..backends.openai_answer import ApiError, scrub, secret
from .probe import POLL_S, ServerError, listed_models, poll, startup_hint, version

if TYPE_CHECKING:
    import requests

_PLACEHOLDER = re.compile(r"\{(id|port|model_dir|key)\}")


def server_command(command: str, fields: dict) -> list[str]:
    """The command's words with the placeholders {id}, {port}, {model_dir} and {key} filled in."""
    return [
        _PLACEHOLDER.sub(lambda m: str(fields[m.group(1)]), part) for part in shlex.split(command)
    ]


SHELLS = {"sh", "bash", "dash", "zsh"}
_SHELL_WORDS = {"exec", "env", "nohup", "command", "time"}  # run the word after them
_BUILTINS = {"cd", "export", "set", "true", "false", ":", "test", "[", "echo", "exit", "ulimit"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")"}


def own_bin() -> Path:
    """The folder of the Python ocg runs in: its venv's programs (transformers, vllm) are there,
    activated or not."""
    return Path(sys.executable).parent


def resolve_program(word: str) -> str | None:
    """The program a command word runs: a path as it is (if executable), else the one beside
    sys.executable, else the one on PATH; None where there is none."""
    if "/" in word:
        return word if os.access(word, os.X_OK) and not os.path.isdir(word) else None
    beside = own_bin() / word
    if os.access(beside, os.X_OK) and not beside.is_dir():
        return str(beside)
    return shutil.which(word)


def programs(words: list[str]) -> list[str]:
    """The programs a server command runs: its first word, and where it is `sh -c SCRIPT`, the
    first word of each of the script's simple commands (after exec, env and VAR=value)."""
    if not words:
        return []
    if Path(words[0]).name not in SHELLS or len(words) < 3 or words[1] != "-c":
        return [words[0]]
    lexer = shlex.shlex(words[2], posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    found, start = [words[0]], True
    for token in lexer:
        if token in _SEPARATORS:
            start = True
        elif start and (token in _SHELL_WORDS or "=" in token or token.startswith("-")):
            continue
        elif start:
            start = False
            if token not in _BUILTINS and "$" not in token:
                found.append(token)
    return list(dict.fromkeys(found))


def check_programs(spec, where: str) -> None:
    """Every program the entry's server command runs can be found (beside sys.executable, else on
    PATH), before any work; else one error naming it and the command."""
    if spec.backend != "openai" or spec.api.server is None:
        return
    words = server_command(
        spec.api.server.command, {"id": spec.id, "port": 0, "model_dir": spec.id, "key": "***"}
    )
    for program in programs(words):
        if resolve_program(program) is None:
            raise OcgInputError(
                f"{where}.api.server.command",
                f"{program!r} (in {' '.join(words)!r}) is neither beside {sys.executable} nor "
                "on PATH; expected it installed in this environment, or a path to it",
            )


def _server_env() -> dict:
    """The server's environment: PATH with the venv's own bin first, so that a shell command's
    programs are found as check_programs found them."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(own_bin()), env.get("PATH", os.defpath)])
    return env


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


STOP_GRACE_S = 10.0  # a server's SIGTERM to SIGKILL: uvicorn finishes the requests in flight


def _stop(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
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


@contextmanager
def running_server(spec, log_path: Path, key: str = "") -> Iterator[dict]:
    """Start the entry's server, wait until it answers, yield what the run card records; stop it."""
    server = spec.api.server
    port = server.port or free_port()
    where = f"models.{spec.name}.api.server"
    if port_in_use(port):
        raise OcgInputError(f"{where}.port", f"port {port} is already in use on this machine")
    fields = {"id": spec.id, "port": port, "model_dir": server.model_dir or spec.id}
    command = server_command(server.command, {**fields, "key": key})
    shown = server_command(server.command, {**fields, "key": "***"})  # what cards and errors say
    base_url = spec.api.base_url.replace("{port}", str(port)).rstrip("/")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    refuse_link(
        log_path
    )  # the log is appended to: never another file (O_NOFOLLOW: nor one linked since)
    log = os.fdopen(
        os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666), "ab"
    )
    try:
        proc = subprocess.Popen(
            [resolve_program(command[0]) or command[0], *command[1:]],
            env=_server_env(),
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
        deadline = time.monotonic() + float(server.startup_timeout_s)
        listed: tuple[requests.Response, str] | None = None
        other: str | None = None
        while listed is None:
            if proc.poll() is not None:
                if key:
                    copier.join(5)  # the log's tail complete
                raise ServerError(
                    f"the server exited with status {proc.returncode} before answering "
                    f"({' '.join(shown)}); log {log_path}:\n{_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                last = f" (its last answer: {other}{startup_hint(shown, other)})" if other else ""
                raise ServerError(
                    f"the server did not answer {base_url}/models with HTTP 200 within "
                    f"{server.startup_timeout_s} s{last}; log {log_path}:\n{_tail(log_path)}"
                )
            poll_s = round(
                min(POLL_S, max(deadline - time.monotonic(), 0.1)), 1
            )  # the last poll ends by the deadline
            listed, now = poll(base_url, key, where, spec.api.key_env, poll_s)
            other = now or other
            if listed is None:
                time.sleep(0.5)
        yield {
            "command": shown,
            "base_url": base_url,
            "pid": proc.pid,
            "version": version(base_url, key),
            "http_server": scrub(listed[0].headers.get("server") or "", key) or None,
            "models_listed": listed_models(listed[1], key),
            "log": str(log_path),
        }
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(proc)
        if key:
            copier.join(5)
        log.close()


@contextmanager
def server_for_run(spec, backend, log: Path) -> Iterator[dict | None]:
    """The model entry's inference server (api.server), started for this run's generation (or a
    judge's scoring, scoring/judging.py) and attached to its backend; None where the entry names
    no server."""
    if spec.backend != "openai" or spec.api.server is None:
        yield None
        return
    with running_server(backend.spec, log, backend.key) as info:
        try:
            backend.attach_server(info)
        except ApiError as exc:
            raise ServerError(
                f"the server answers /models but not a first chat request for model "
                f"{spec.id!r} (unknown to it?): {exc}; log {info['log']}"
            ) from None
        yield info
