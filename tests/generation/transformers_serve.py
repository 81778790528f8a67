"""`transformers serve` as an `api.server` of a models entry (the embedded model, on the CPU),
for the tests that start one: generation, the judge, a sweep."""

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ocg.weights.embedded import ensure_converted

TRANSFORMERS_CLI = Path(sys.executable).parent / "transformers"


TRANSFORMERS_4 = metadata.version("transformers").startswith("4.")


# The model every request gets: `--force_model X` in transformers 4.x, a positional X in 5.x.
FORCE_MODEL = "--force_model " if TRANSFORMERS_4 else ""


def server_entry(**server):
    model_dir = str(ensure_converted("smollm2-135m-instruct"))
    command = (
        f"{TRANSFORMERS_CLI} serve {FORCE_MODEL}{{model_dir}} --device cpu --dtype float32 "
        f"--host 127.0.0.1 --port {{port}}"
    )
    return {
        "id": model_dir,
        "backend": "openai",
        "max_new_tokens": 48,
        "batch_size": 8,
        "api": {
            "base_url": "http://127.0.0.1:{port}/v1",
            "concurrency": 2,
            "timeout_s": 120,
            "backoff_s": 0.2,
            "max_retries": 2,
            "server": {
                "command": command,
                "model_dir": model_dir,
                "startup_timeout_s": 180,
                **server,
            },
        },
    }


def no_server_left():
    out = subprocess.run(
        ["pgrep", "-f", f"{TRANSFORMERS_CLI} serve"], capture_output=True, text=True
    )
    return out.stdout.strip() == ""
