"""The CLI against small local servers on 127.0.0.1 (tests/generation/test_hostile_http.py and
its neighbours): a models entry for one, `ocg generate` through main(), and a server started for
the run with a key."""

import json
import sys

from ocg.cli import main

KEY = "sk-hostile-http-7c1e9"
WORK = ["--conditions", "ordered", "--subset-k", "1", "--templates", "0"]


def completion(content, **extra):
    return {
        "model": "local",
        "choices": [
            {
                "message": {"role": "assistant", "content": content},
                "finish_reason": extra.pop("finish_reason", "stop"),
            }
        ],
        **extra,
    }


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def generate(tmp_path, capsys, entry: dict, monkeypatch=None):
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": {"m": entry}}))  # JSON is YAML
    return run_cli(capsys, "generate", "m", "--models-file", path, *WORK, "--out", tmp_path / "gen")


def api_entry(url, **api):
    return {
        "id": "local-model",
        "backend": "openai",
        "max_new_tokens": 32,
        "api": {
            "base_url": url,
            "key_env": "OCG_HTTP_KEY",
            "concurrency": 2,
            "timeout_s": 5,
            "backoff_s": 0.05,
            "max_retries": 1,
            **api,
        },
    }


def nothing_holds_the_key(root):
    for path in root.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


# -- a server started for the run, with a key
KEYED_SERVER = r"""
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
print("starting with", sys.argv[1:], flush=True)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def authorised(self):
        if args.get("--api-key") and self.headers.get("Authorization") != "Bearer " + args["--api-key"]:
            self.send(401, {"error": "unauthorised"}); return False
        return True
    def do_GET(self):
        if self.path == "/v1/models" and args.get("--mode") == "deep":
            data = b"[" * 100_000 + b"]" * 100_000
            self.send_response(200); self.send_header("Content-Length", str(len(data))); self.end_headers()
            return self.wfile.write(data)
        if self.path == "/v1/models" and args.get("--mode") == "404":
            return self.send(404, {"error": "no such route"})
        if self.path == "/v1/models" and args.get("--mode") == "echo404":  # the key at the excerpt's edge
            return self.send(404, {"error": "x" * 175 + self.headers.get("Authorization", "")})
        if not self.authorised():
            return
        if self.path == "/version":
            return self.send(200, {"version": "9.9"})
        if args.get("--mode") == "echomodels":  # a server that lists the request's headers as its models
            return self.send(200, {"data": [{"id": "served"}, {"id": self.headers.get("Authorization")}]})
        self.send(200, {"data": None} if args.get("--mode") == "null" else {"data": [{"id": "served"}]})
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.authorised():
            self.send(200, {"model": "served", "choices": [{"message": {"content": "A dog runs."}, "finish_reason": "stop"}]})
HTTPServer(("127.0.0.1", int(args["--port"])), H).serve_forever()
"""


def server_entry(tmp_path, args, key_env="OCG_HTTP_KEY", startup_timeout_s=20):
    script = tmp_path / "keyed_server.py"
    script.write_text(KEYED_SERVER)
    api = {
        "base_url": "http://127.0.0.1:{port}/v1",
        "concurrency": 2,
        "timeout_s": 5,
        "max_retries": 1,
        "server": {
            "command": f"{sys.executable} {script} --port {{port}} {args}",
            "startup_timeout_s": startup_timeout_s,
        },
    }
    return {
        "id": "served",
        "backend": "openai",
        "max_new_tokens": 32,
        "api": {**api, **({"key_env": key_env} if key_env else {})},
    }
