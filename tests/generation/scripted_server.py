"""A local HTTP server whose every answer a test scripts, shared by the API tests of generation,
scoring (the judge) and sweep (a Slurm job that calls it)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-test-ocg-secret-4f9d2"


class ScriptedServer:
    """A local server whose every answer comes from `respond(body, headers) -> (status, headers,
    bytes, trickle_s)`; trickle_s > 0 sends the body a byte at a time."""

    def __init__(self, respond):
        self.bodies = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                status, headers, data, trickle = respond(body, self.headers)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1] if trickle else data[i:])
                        self.wfile.flush()
                        if not trickle:
                            break
                        time.sleep(trickle)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def ok_body(text="A dog runs."):
    return json.dumps(
        {
            "model": "served-model",
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
        }
    ).encode()
