"""Deadlines that are deadlines, and answers past HTTP's limits named,
through the real CLI against servers on 127.0.0.1 that each test starts and stops: one that
trickles its headers a byte at a time, an `api.server` whose models list or version trickles, a
redirect loop, headers past http.client's limits, a content coding urllib3 cannot undo."""

import json
import socket
import sys
import threading
import time

import pytest
import urllib3

from ocg.generation import read_generations
from tests.generation.hostile_http import KEY, api_entry, completion, generate


class TricklingServer:
    """Answers every connection with `answer`, one byte every `every_s` seconds; `broken_after`
    holds, per connection, the seconds from its request to the moment the client hung up."""

    def __init__(self, answer: bytes, every_s: float = 0.2):
        self.answer, self.every_s, self.broken_after = answer, every_s, []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with conn:
            conn.recv(65536)
            t0 = time.monotonic()
            try:
                for i in range(len(self.answer)):
                    conn.sendall(self.answer[i : i + 1])
                    time.sleep(self.every_s)
            except OSError:  # the client hung up
                self.broken_after.append(time.monotonic() - t0)

    def close(self):
        self.sock.close()


def trickled_completion(padding: int) -> bytes:
    """A whole, valid answer: its headers take `padding` bytes (at 0.2 s a byte: padding / 5 s)."""
    body = json.dumps(completion("A dog runs.")).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: "
        + b"a" * padding
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body
    )


def test_headers_trickled_a_byte_at_a_time_end_at_timeout_s(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = TricklingServer(
        trickled_completion(padding=60)
    )  # about 30 s of headers, each byte 0.2 s apart
    t0 = time.monotonic()
    try:
        code, err = generate(
            tmp_path, capsys, api_entry(server.url, timeout_s=2, max_retries=0, concurrency=1)
        )
    finally:
        server.close()
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        f"{server.url}/chat/completions: gave up after 1 attempts (last: no complete answer within timeout_s=2 s)"
        in err
    )
    assert server.broken_after and max(server.broken_after) < 2 + 1.0, (
        server.broken_after
    )  # hung up at the deadline
    assert time.monotonic() - t0 < 20  # not the 30 s the headers take


TRICKLING_SERVER = r"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, payload, trickle=False):
        data = json.dumps(payload).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers()
        try:
            for i in range(len(data) if trickle else 1):
                self.wfile.write(data[i:i + 1] if trickle else data); self.wfile.flush()
                time.sleep(0.2 if trickle else 0)
        except (BrokenPipeError, ConnectionResetError):  # ocg hung up at its deadline
            pass
    def do_GET(self):
        if self.path == "/version":
            return self.send({"version": "1.0" + " " * 200}, trickle=args["--mode"] == "version")
        self.send({"data": [{"id": "served"}], "pad": "x" * 200}, trickle=args["--mode"] == "models")
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send({"model": "served", "choices": [{"message": {"content": "A dog runs."}, "finish_reason": "stop"}]})
HTTPServer(("127.0.0.1", int(args["--port"])), H).serve_forever()
"""


def trickling_entry(tmp_path, mode, startup_timeout_s):
    script = tmp_path / "trickling_server.py"
    script.write_text(TRICKLING_SERVER)
    return {
        "id": "served",
        "backend": "openai",
        "max_new_tokens": 32,
        "api": {
            "base_url": "http://127.0.0.1:{port}/v1",
            "concurrency": 2,
            "timeout_s": 5,
            "max_retries": 0,
            "server": {
                "command": f"{sys.executable} {script} --port {{port}} --mode {mode}",
                "startup_timeout_s": startup_timeout_s,
            },
        },
    }


def test_a_models_list_trickled_a_byte_at_a_time_ends_at_startup_timeout_s(tmp_path, capsys):
    t0 = time.monotonic()
    code, err = generate(tmp_path, capsys, trickling_entry(tmp_path, "models", startup_timeout_s=5))
    took = time.monotonic() - t0
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        "/v1/models with HTTP 200 within 5 s (its last answer: no complete answer within" in err
    ), err
    assert took < 5 + 8, took  # the server's start, then 5 s; each poll would take 50 s to read


def test_a_version_trickled_a_byte_at_a_time_is_not_waited_for(tmp_path, capsys):
    t0 = time.monotonic()
    code, err = generate(
        tmp_path, capsys, trickling_entry(tmp_path, "version", startup_timeout_s=20)
    )
    assert code == 0, err
    assert time.monotonic() - t0 < 30  # not the 45 s the version takes
    card = json.loads((tmp_path / "gen" / "m" / "run_card.json").read_text())
    assert (
        card["backend"]["server"]["version"] is None
        and len(read_generations(tmp_path / "gen" / "m")) == 24
    )


# -- answers past HTTP's limits (item 14) -----------------------------------------------------------
@pytest.mark.parametrize(
    "headers, what",
    [
        ({f"X-Many-{i}": "1" for i in range(150)}, "(got more than 100 headers); refused"),
        ({"X-Long": "a" * 70_000}, "(got more than 65536 bytes when reading header line); refused"),
    ],
)
def test_headers_past_http_clients_limits_are_named(
    tmp_path, capsys, monkeypatch, serve, headers, what
):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json", **headers},
            json.dumps(completion("A dog runs.")).encode(),
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url, max_retries=3))
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        f"ocg: error: {server.url}/chat/completions: the answer is past http.client's limits {what}"
        in err
    ), err
    assert "ConnectionError" not in err


def test_a_redirect_loop_names_the_url(tmp_path, capsys, monkeypatch, serve):
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(lambda b, h: (307, {"Location": "/v1/chat/completions"}, b""))
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 1 and err.count("ocg: error: ") == 1, err
    url = f"{server.url}/chat/completions"
    assert f"ocg: error: {url}: more than 30 redirects (a loop?), the last to {url}" in err, err


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br"])
def test_a_content_coding_that_cannot_be_undone_is_named(
    tmp_path, capsys, monkeypatch, serve, coding
):
    undone = (
        urllib3.response.HTTPResponse.CONTENT_DECODERS
    )  # br, zstd: where brotli, zstandard are installed
    if coding.rsplit(" ", 1)[-1] in undone:
        pytest.skip(f"urllib3 undoes {coding} here")
    monkeypatch.setenv("OCG_HTTP_KEY", KEY)
    server = serve(
        lambda b, h: (
            200,
            {"Content-Type": "application/json", "Content-Encoding": coding},
            b"\x8b\x05\x80\xff\xfe binary",
        )
    )
    code, err = generate(tmp_path, capsys, api_entry(server.url))
    assert code == 1 and err.count("ocg: error: ") == 1, err
    assert (
        f"{server.url}/chat/completions: HTTP 200: the body is in Content-Encoding {coding!r}, which cannot "
        f"be undone here (urllib3 undoes {', '.join(undone)}); refused" in err
    ), err
    assert "not JSON" not in err and "\ufffd" not in err
