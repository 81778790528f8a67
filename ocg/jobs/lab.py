"""`make lab`: JupyterLab for the notebooks, safe on a shared or remote machine. It listens on
127.0.0.1 only (reach it from a laptop through an ssh tunnel), asks for a token (a fresh random
one unless OCG_LAB_TOKEN gives it), opens new notebooks on the `Python (ocg)` kernel, and serves
the project folder, so notebooks/ and outputs/ are both in reach."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
from pathlib import Path

from ..core.paths import PROJECT_ROOT

KERNEL = "ocg"  # the Makefile's KERNEL: installed into the venv as "Python (ocg)"
HOST = "127.0.0.1"
DEFAULT_PORT = 8888


def token() -> str:
    """OCG_LAB_TOKEN, else a fresh random token (48 hex digits)."""
    return os.environ.get("OCG_LAB_TOKEN") or secrets.token_hex(24)


def free_port(start: int = DEFAULT_PORT, tries: int = 50) -> int:
    """The first port from `start` nobody listens on at 127.0.0.1 (another user's lab, say)."""
    for port in range(start, start + tries):
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port on {HOST} in {start}-{start + tries - 1}")


def command(port: int, lab_token: str, root: Path = PROJECT_ROOT) -> list[str]:
    """The `jupyter lab` command line: this venv's Jupyter, bound to 127.0.0.1, with the token."""
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    return [
        jupyter,
        "lab",
        f"--ServerApp.ip={HOST}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={lab_token}",
        f"--MappingKernelManager.default_kernel_name={KERNEL}",
        "--ServerApp.open_browser=False",
        # as root (a container's user) Jupyter refuses to start unless told: the token and
        # 127.0.0.1 are what guard it, as for any user
        *(["--ServerApp.allow_root=True"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
    ]


def url(port: int, lab_token: str) -> str:
    return f"http://{HOST}:{port}/lab?token={lab_token}"


def how_to_open(port: int, lab_token: str) -> str:
    """What `make lab` prints first: the address, and the tunnel from a laptop."""
    user, host = os.environ.get("USER", "you"), socket.gethostname()
    return (
        f"JupyterLab on {HOST}:{port} (this machine only), kernel 'Python (ocg)'.\n"
        f"  Here: open {url(port, lab_token)}\n"
        f"  From a laptop: ssh -N -L {port}:{HOST}:{port} {user}@{host}\n"
        f"    then open {url(port, lab_token)} in the laptop's browser.\n"
        "  Stop it with Ctrl-C."
    )


def main() -> None:
    """Print how to open it, then run JupyterLab in this process's place."""
    port = int(os.environ.get("OCG_LAB_PORT") or free_port())
    lab_token = token()
    print(how_to_open(port, lab_token), flush=True)
    env = {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1"}  # the venv's kernel before ~/.local's
    argv = command(port, lab_token)
    os.execvpe(argv[0], argv, env)


if __name__ == "__main__":
    main()
