"""pBLEURT through bleurt-pytorch on transformers 4 and 5 (ocg/metrics/bleurt_compat.py): on a tiny
checkpoint laid out as BLEURT-20's, the tokenizer gives sentencepiece's own ids, every weight is
the file's, a padded batch scores as each pair alone does, and (when OCG_CROSS_STACK_PYTHON names
the other stack's interpreter) both stacks give the same scores to the same checkpoint."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from ocg.metrics import bleurt
from tests.helpers import build_tiny_bleurt

pytestmark = [pytest.mark.slow, pytest.mark.tf4]  # a tiny BLEURT model, trained tokenizer and all
SENTENCES = [
    "The dog caught the frisbee that the boy threw.",
    "A boy rides a bike down the street.",
    "The dog runs.",
    "Dog frisbee throw catch.",
]
TEXTS = [
    *SENTENCES,
    "frisbee",
    "The boy rode. Then he stopped. The end.",
    "Der Hund fängt die Frisbee, très bien.",
]
SCORE = """import json, sys
import transformers
from ocg.metrics import bleurt
tok, model = bleurt.load_bleurt(sys.argv[1], device="cpu")
pairs = [tuple(p) for p in json.loads(sys.argv[2])]
scores = bleurt.score_pairs(pairs, tok, model, batch_size=16)
print(json.dumps({"transformers": transformers.__version__, "scores": [scores[p] for p in pairs]}))
"""


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return build_tiny_bleurt(tmp_path_factory.mktemp("bleurt"), SENTENCES)


@pytest.fixture(scope="module")
def loaded(checkpoint):
    return bleurt.load_bleurt(str(checkpoint), device="cpu")


def pairs():
    return [(r, c) for r in TEXTS for c in TEXTS]


def test_the_tokenizer_gives_sentencepiece_ids(checkpoint, loaded):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(checkpoint / "spm.model"))
    cls, sep = sp.piece_to_id("[CLS]"), sp.piece_to_id("[SEP]")
    tokenizer, _ = loaded
    for ref, cand in pairs():
        assert tokenizer(ref, cand)["input_ids"] == [
            cls,
            *sp.encode(ref),
            sep,
            *sp.encode(cand),
            sep,
        ], (ref, cand)


def test_every_weight_is_the_files(checkpoint, loaded):
    from safetensors.torch import load_file

    stored = load_file(checkpoint / "model.safetensors")
    state = loaded[1].state_dict()
    assert set(stored) <= set(state) and len(stored) > 20
    assert all(state[k].equal(v) for k, v in stored.items())


def test_a_padded_batch_scores_as_each_pair_alone(loaded):
    tokenizer, model = loaded
    batched = bleurt.score_pairs(pairs(), tokenizer, model, batch_size=16)
    alone = bleurt.score_pairs(pairs(), tokenizer, model, batch_size=1)
    assert len(set(batched.values())) > 10  # the pairs score differently: a wrong mask would show
    assert max(abs(batched[p] - alone[p]) for p in pairs()) < 1e-4


def test_the_other_stack_gives_the_same_scores(checkpoint, loaded):
    other = os.environ.get("OCG_CROSS_STACK_PYTHON")
    if not other:
        pytest.skip("OCG_CROSS_STACK_PYTHON (the other transformers stack's python) not set")
    root = Path(__file__).parent.parent.parent
    done = subprocess.run(
        [other, "-c", SCORE, str(checkpoint), json.dumps(pairs())],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
    )
    import transformers

    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert theirs["transformers"].split(".")[0] != transformers.__version__.split(".")[0], (
        "not the other stack"
    )
    ours = bleurt.score_pairs(pairs(), *loaded, batch_size=16)
    diff = max(abs(ours[p] - t) for p, t in zip(pairs(), theirs["scores"]))
    print(
        f"transformers {transformers.__version__} vs {theirs['transformers']}: max |score difference| {diff:.2e} "
        f"(x100 scale) over {len(ours)} pairs, scores {min(ours.values()):.4f}..{max(ours.values()):.4f}"
    )
    assert diff < 1e-3
