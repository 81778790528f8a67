"""Repeated samples: the run file's `samples` and `sampling`, the seed of each sample, and the
seed of each batch of a sample (docs/METHODS.md, "Repeated samples and pass@k").

Sample s of a model is drawn with seed_s = the entry's seed + s. A transformers batch seeds its
generator from (seed_s, the batch's first instance id) through sha256, so a resumed run (whose
remaining batches are the same chunks, run.plan_batches) and a rerun at the same batch size draw
the same samples. Greedy runs (sampling null, one sample) take none of this: their records and run
cards are what they always were.
"""

from __future__ import annotations

import hashlib

from ..config.file_model import validate
from ..config.model_registry import SEED_MAX
from ..config.run_file import Sampling
from ..core.arguments import positive_int
from ..core.errors import OcgInputError
from ..records import SamplingBlock

SEEDING_RULE = (
    "sample s: seed_s = seed + s; transformers: each batch seeds torch, numpy and random "
    "with int(sha256('<seed_s>|<first instance id of the batch>')[:8]) mod 2**32; "
    "API: the request's seed is seed_s; replay: the synthetic writer's RNG takes s"
)


def check_sampling(where: str, samples: object, sampling: object) -> tuple[int, dict | None]:
    """(samples, sampling with top_p filled in), or an error naming the field: k > 1 identical
    greedy answers are pointless, so samples > 1 needs a sampling block."""
    count: int = positive_int(
        f"{where}samples", samples, "a positive number of samples per instance"
    )
    checked_sampling: dict[str, float] | None = None
    if sampling is not None:
        checked = validate(Sampling, sampling, f"{where}sampling")
        checked_sampling = {
            "temperature": float(checked.temperature),
            "top_p": float(checked.top_p),
        }
    elif count > 1:
        raise OcgInputError(
            f"{where}samples",
            f"{count} samples need sampled decoding: add "
            "`sampling: {temperature: T}` (greedy decoding gives the same answer each time)",
        )
    return count, checked_sampling


def sample_seed(seed: int, sample: int) -> int:
    """The seed of sample `sample` (kept in numpy's range)."""
    return (seed + sample) % (SEED_MAX + 1)


def batch_seed(seed_s: int, first_instance_id: str) -> int:
    """The generator seed of one batch of a sample: stable across processes and reruns."""
    digest = hashlib.sha256(f"{seed_s}|{first_instance_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (SEED_MAX + 1)


def card_block(
    seed: int, samples: int, sampling: dict, seeds_honoured: bool = True
) -> SamplingBlock:
    """The run card's `sampling`: what was asked, each sample's seed, and the seeding rule."""
    return SamplingBlock.model_validate(
        {
            "samples": samples,
            **sampling,
            "seeds": [sample_seed(seed, s) for s in range(samples)],
            "seeding": SEEDING_RULE,
            "seeds_honoured": seeds_honoured,
        }
    )
