"""The OpenAI-compatible backend against a local HTTP server that misbehaves on purpose."""

import json
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ocg.errors import OcgInputError
from ocg.generation import generate, read_generations
from ocg.generation.api_backend import ApiError
from ocg.models import parse_models

KEY = "sk-test-ocg-secret-4f9d2"


class FlakyServer:
    """Answers chat completions; the first request of some prompts gets 429, 500 or a stall."""

    def __init__(self, mode="flaky"):
        self.mode = mode
        self.log = []  # (time, prompt, status)
        self.seen = {}
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                status, headers, payload, stall = server.decide(self.headers, body, prompt)
                if stall:
                    time.sleep(stall)
                with server.lock:
                    server.log.append((time.time(), prompt, status))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                data = json.dumps(payload).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def decide(self, headers, body, prompt):
        if headers.get("Authorization") != f"Bearer {KEY}":
            return 401, {}, {"error": {"message": "Incorrect API key provided"}}, 0
        if self.mode == "missing":
            return 404, {}, {"error": {"message": f"model {body['model']} does not exist"}}, 0
        with self.lock:
            n = self.seen[prompt] = self.seen.get(prompt, 0) + 1
        words = prompt.split("\n")[0].split(": ", 1)[1]
        kind = zlib.crc32(words.encode()) % 4  # which failure this prompt gets on its first try
        if n == 1 and kind == 1:
            return 429, {"Retry-After": "1"}, {"error": {"message": "rate limited"}}, 0
        if n == 1 and kind == 2:
            return 500, {}, {"error": {"message": "internal"}}, 0
        if n == 1 and kind == 3:
            return 200, {}, {}, 1.5  # longer than the client's timeout
        assert body["temperature"] == 0 and body["seed"] == 42 and body["max_tokens"] == 32
        answer = f"A sentence with {words}."
        return 200, {}, {"model": body["model"], "choices": [
            {"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 8}}, 0

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FlakyServer()
    yield s
    s.close()


def api_spec(url, **api):
    entry = {"id": "local-model", "backend": "openai", "max_new_tokens": 32, "batch_size": 12,
             "api": {"base_url": url, "key_env": "OCG_TEST_KEY", "concurrency": 4,
                     "timeout_s": 0.5, "backoff_s": 0.05, "max_retries": 4, **api}}
    return parse_models({"models": {"local-api": entry}}, "test")["local-api"]


def test_answers_arrive_despite_429_500_and_timeouts(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    model_dir = generate(api_spec(server.url), out_dir=tmp_path, progress=False,
                         conditions=["ordered"], subset_k=1, template_ids=[0])
    df = read_generations(model_dir)
    assert len(df) == 24 and df.instance_id.is_unique
    assert all(a.startswith("A sentence with ") for a in df.answer)
    assert (df.answer == df.concepts.map(lambda c: f"A sentence with {' '.join(c)}.")).all()
    statuses = [s for _, _, s in server.log]
    assert statuses.count(429) > 0 and statuses.count(500) > 0
    assert statuses.count(200) > 24  # the stalled ones were answered too late, then retried
    # Retry-After: 1 was honoured (the backoff alone would retry after 0.05 s)
    for t, prompt, status in server.log:
        if status == 429:
            retry = min(t2 for t2, p2, s2 in server.log if p2 == prompt and t2 > t)
            assert retry - t >= 0.9
    card = json.loads((model_dir / "run_card.json").read_text())
    assert card["backend"]["retried_requests"] >= statuses.count(429) + statuses.count(500)
    assert card["backend"]["key_env"] == "OCG_TEST_KEY"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_bad_key_is_a_clear_error(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", "sk-wrong")
    with pytest.raises(ApiError, match=r"401 from .*: the key in \$OCG_TEST_KEY was refused"):
        generate(api_spec(server.url), out_dir=tmp_path, progress=False, conditions=["ordered"],
                 subset_k=1, template_ids=[0])


def test_unknown_model_is_a_clear_error(tmp_path, monkeypatch):
    server = FlakyServer(mode="missing")
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    try:
        with pytest.raises(ApiError, match=r"404 from .*unknown endpoint or model 'local-model'"):
            generate(api_spec(server.url), out_dir=tmp_path, progress=False,
                     conditions=["ordered"], subset_k=1, template_ids=[0])
    finally:
        server.close()


def test_missing_key_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("OCG_TEST_KEY", raising=False)
    with pytest.raises(OcgInputError, match="environment variable OCG_TEST_KEY is not set"):
        generate(api_spec("http://127.0.0.1:9/v1"), out_dir=tmp_path, progress=False,
                 conditions=["ordered"], subset_k=1, template_ids=[0])


def test_gives_up_after_max_retries(tmp_path, monkeypatch):
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    spec = api_spec("http://127.0.0.1:9/v1", max_retries=2, timeout_s=0.2)  # nothing listens
    with pytest.raises(ApiError, match="gave up after 3 attempts"):
        generate(spec, out_dir=tmp_path, progress=False, conditions=["ordered"], subset_k=1,
                 template_ids=[0])
