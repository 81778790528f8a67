"""An inference server started for one generation run: vLLM, SGLang, TGI, llama.cpp, or
`transformers serve`, anything that serves the OpenAI chat API.

A model entry's `api.server` names the command (`{id}`, `{port}` and `{model_dir}` are filled
in, nothing else: other braces, e.g. a JSON `--hf-overrides`, are the command's own); the server
is started in its own process group, polled until it answers `GET /models` (bounded by
`startup_timeout_s`; a process that exits first is an error with its log's tail), and stopped
when the run ends, fails or is cancelled (SIGTERM from Slurm included): SIGTERM to the group,
then SIGKILL. Its output goes to `server.log` beside the generations.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from ..errors import OcgInputError


class ServerError(RuntimeError):
    """The server could not be started, or stopped answering."""


_PLACEHOLDER = re.compile(r"\{(id|port|model_dir)\}")


def server_command(command: str, fields: dict) -> list[str]:
    """The command's words with the placeholders {id}, {port} and {model_dir} filled in."""
    return [_PLACEHOLDER.sub(lambda m: str(fields[m.group(1)]), part) for part in shlex.split(command)]


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


def _version(base_url: str) -> str | None:
    """What the server says its version is, where it says (vLLM and TGI answer /version)."""
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    try:
        resp = requests.get(f"{root}/version", timeout=2)
        return resp.text.strip()[:200] if resp.status_code == 200 else None
    except requests.RequestException:
        return None


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


@contextmanager
def running_server(spec, log_path: Path) -> Iterator[dict]:
    """Start the entry's server, wait until it answers, yield what the run card records; stop it."""
    server = spec.api["server"]
    port = server.get("port") or free_port()
    where = f"models.{spec.name}.api.server"
    if port_in_use(port):
        raise OcgInputError(f"{where}.port", f"port {port} is already in use on this machine")
    fields = {"id": spec.id, "port": port, "model_dir": server.get("model_dir") or spec.id}
    command = server_command(server["command"], fields)
    base_url = spec.api["base_url"].replace("{port}", str(port)).rstrip("/")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("ab")
    try:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:  # no such program, or not executable
        log.close()
        raise OcgInputError(f"{where}.command", f"cannot start {command[0]!r} ({exc.strerror}); "
                                                "expected a program on PATH or a path to one") from None
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a cancelled job still stops its server
    try:
        deadline = time.monotonic() + float(server.get("startup_timeout_s", 600))
        listed = None
        while listed is None:
            if proc.poll() is not None:
                raise ServerError(f"the server exited with status {proc.returncode} before answering "
                                  f"({' '.join(command)}); log {log_path}:\n{_tail(log_path)}")
            if time.monotonic() > deadline:
                raise ServerError(f"the server did not answer {base_url}/models within "
                                  f"{server.get('startup_timeout_s', 600)} s; log {log_path}:\n{_tail(log_path)}")
            try:
                resp = requests.get(f"{base_url}/models", timeout=2)
                if resp.status_code == 200:
                    listed = resp
            except requests.RequestException:
                pass
            if listed is None:
                time.sleep(0.5)
        try:
            models = [m.get("id") for m in listed.json().get("data", [])][:20]
        except (ValueError, AttributeError):
            models = []
        yield {"command": command, "base_url": base_url, "pid": proc.pid, "version": _version(base_url),
               "http_server": listed.headers.get("server"), "models_listed": models, "log": str(log_path)}
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(proc)
        log.close()


@contextmanager
def server_for_run(spec, backend, model_dir: Path) -> Iterator[dict | None]:
    """The model entry's inference server (api.server), started for this run's generation and
    attached to its backend; None where the entry names no server."""
    if spec.backend != "openai" or not spec.api.get("server"):
        yield None
        return
    from .api_backend import ApiError
    with running_server(spec, model_dir / "server.log") as info:
        try:
            backend.attach_server(info)
        except ApiError as exc:
            raise ServerError(f"the server answers /models but not a first chat request for model "
                              f"{spec.id!r} (unknown to it?): {exc}; log {info['log']}") from None
        yield info
