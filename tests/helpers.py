"""Shared test helpers: synthetic generation records in the store's format, a hand-made summary
table, tiny models, and the benchmark scripts as modules."""

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ocg.core.paths import PROJECT_ROOT
from ocg.data.instances import instance_id
from ocg.generation import GenerationStore
from ocg.generation.answer_store.record_format import read_record


def disk_record(line):
    """One store line as the store reads it (format 3 decoded), its prompt left in the prompt file."""
    obj = json.loads(line)
    return read_record(obj, "a store line")


def write_generations(root, model, rows, condition="ordered"):
    """rows: dicts with set_id, template_id, perm_index, concepts, answer (+ optional fields)."""
    store = GenerationStore(root / model / f"{condition}.jsonl")
    records = []
    for r in rows:
        pos = r.get("pos_pattern", "N" * len(r["concepts"]))
        records.append(
            {
                "instance_id": instance_id(
                    condition, r["template_id"], r["set_id"], r["perm_index"]
                ),
                "model": model,
                "condition": condition,
                "template_id": r["template_id"],
                "set_id": r["set_id"],
                "perm_index": r["perm_index"],
                "concepts": list(r["concepts"]),
                "pos_pattern": pos,
                "answer": r["answer"],
                "answer_status": "ok"
                if isinstance(r["answer"], str) and r["answer"].strip()
                else ("empty" if isinstance(r["answer"], str) else "unclosed_think"),
                "raw": r["answer"] or "",
                "finish_reason": r.get("finish_reason", "stop"),
                **({"sample": r["sample"]} if "sample" in r else {}),
            }
        )
    store.append(records)
    return root / model


def two_models_rows(answers):
    """Rows for the conftest's scored_run (models a and b): sets s1, s2, templates 0, 1 and six
    permutations of boy, ride, bike, street, each answering from `answers` in turn (b one step ahead)."""
    return lambda model, _condition: [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": answers[(p + t + (model == "b")) % len(answers)],
        }
        for s in ("s1", "s2")
        for t in (0, 1)
        for p in range(6)
    ]


def build_tiny_bleurt(folder, sentences):
    """A random tiny BLEURT checkpoint laid out as BLEURT-20's (spm.model, tokenizer_config.json,
    weights) with a sentencepiece model trained here on `sentences`: the real code path, no hub."""
    import json
    import random
    import shutil

    import sentencepiece as spm
    import torch

    from ocg.metrics.bleurt_compat import import_bleurt

    bleurt_pytorch = import_bleurt()
    rng = random.Random(0)
    words = " ".join(sentences).lower().replace(".", "").split()
    (folder / "toy.txt").write_text(
        "\n".join(" ".join(rng.choice(words) for _ in range(8)) for _ in range(300))
    )
    spm.SentencePieceTrainer.train(
        input=str(folder / "toy.txt"),
        model_prefix=str(folder / "spm"),
        vocab_size=60,
        hard_vocab_limit=False,
        minloglevel=2,
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        pad_piece="[PAD]",
        unk_piece="[UNK]",
    )
    ckpt = folder / "tiny-bleurt"
    ckpt.mkdir()
    shutil.copy(folder / "spm.model", ckpt / "spm.model")
    (ckpt / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "BleurtSPTokenizer",
                "do_lower_case": False,
                "split_by_punct": False,
                "bos_token": "[CLS]",
                "eos_token": "[SEP]",
                "unk_token": "[UNK]",
                "sep_token": "[SEP]",
                "pad_token": "[PAD]",
                "cls_token": "[CLS]",
                "mask_token": "[MASK]",
            }
        )
    )
    vocab = spm.SentencePieceProcessor(model_file=str(ckpt / "spm.model")).get_piece_size()
    torch.manual_seed(0)
    config = bleurt_pytorch.BleurtConfig(
        vocab_size=vocab,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        embedding_size=32,
    )
    bleurt_pytorch.BleurtForSequenceClassification(config).save_pretrained(ckpt)
    return ckpt


def build_tiny_embedder(folder, sentences):
    """A random tiny BERT with mean pooling saved as a sentence-transformers model (a WordPiece
    vocabulary of `sentences`' words): the real code path of semantic diversity, no hub."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = sorted({w.strip(".,!?*:").lower() for s in sentences for w in s.split()} - {""})
    (folder / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *words]) + "\n"
    )
    BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(folder / "bert")
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=len(words) + 6,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=512,
        )
    ).save_pretrained(folder / "bert")
    bert = models.Transformer(str(folder / "bert"), max_seq_length=128)
    SentenceTransformer(
        modules=[bert, models.Pooling(bert.get_word_embedding_dimension(), "mean")]
    ).save(str(folder / "st"))
    return folder / "st"


def summary_row(model, condition, template, **values):
    row = {"model": model, "condition": condition, "template_id": template}
    row.update(values)
    return row


def hand_summary():
    rows = []
    for model, base in (("m1", 0.0), ("m2", 10.0)):
        for cond, shift in (("original", 0.0), ("ordered", 5.0)):
            for t, n_all, n_ord in ((0, 40, 10), (1, 10, 10)):
                rows.append(
                    summary_row(
                        model,
                        cond,
                        t,
                        n_answers=48,
                        n_all_present=n_all + int(shift),
                        n_in_order=n_ord,
                        coverage_wo_order=base + 50 + t * 10 + shift,
                        coverage_w_order=base + 20 + shift,
                        ordered_rate=100 * n_ord / (n_all + int(shift)),
                        pbleu=30 - shift + t,
                        pbleurt=np.nan,
                        distinct_2=90 + t,
                        diverse_rate=80 + shift,
                        perplexity=50 + t * 10,
                    )
                )
    return pd.DataFrame(rows)


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def benchmark(name: str):
    """benchmarks/<name>.py as a module. The benchmarks are scripts, run by path on machines with
    no install (`python benchmarks/gpu_check.py`), that import their neighbours by bare name
    (`from recording import record`); so they are no package, and benchmarks/ leads sys.path only
    while the module is imported, as it does when the script runs."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path[:] = saved


def normalized_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_entries(name="requirements.lock"):
    """({package: version} of a lock file, the packages it marks no-deps)."""
    from ocg.core.paths import PROJECT_ROOT

    entries, nodeps = {}, set()
    for line in (PROJECT_ROOT / name).read_text().splitlines():
        spec = line.split("#")[0].strip()
        if not spec:
            continue
        name, _, version = spec.partition("==")
        assert version, f"requirements.lock: {line!r} is not pinned with =="
        entries[normalized_name(name)] = version
        if "no-deps" in line.split("#", 1)[-1] and "#" in line:
            nodeps.add(normalized_name(name))
    return entries, nodeps


def checked_run(models, conditions, file="r.yaml", name="t", **fields):
    """A CheckedRun as `ocg report` hands one to the plan and the pages, without checking the
    models, templates or scoring files a real run names (the pages and the plan read none)."""
    from ocg.config.checked_run import CheckedRun
    from ocg.config.model_registry import MODELS_FILE
    from ocg.config.run_file import RunFile
    from ocg.scoring import load_scoring_config

    run = RunFile.model_validate(
        {"name": name, "models": models, "conditions": conditions, **fields}
    )
    return CheckedRun(run, {}, MODELS_FILE, load_scoring_config(), Path(file))


def documented_keys() -> dict[str, set[str]]:
    """Per level (`top`, `model`, `metric`, `interval`...), the keys docs/DATA.md's results.json section names."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "DATA.md").read_text()
    section = text.split("## results.json\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[str]] = {}
    for level, key in re.findall(r"^\| (\w+) \| `([^`]+)` \|", section, re.M):
        out.setdefault(level, set()).add(key)
    return out


RESULTS_COPIED = ("signature_key", "design")  # results.json keys copied from elsewhere whole


def nulls_without_reason(obj, path="") -> list[str]:
    """Every null of the models' entries whose object gives no `missing_reason` for its key (the
    package's walk, `ocg verify`'s I6, without entering the keys copied whole; the catch-all
    "not computed" is no reason)."""
    from ocg.site.verify import nulls_without_reason as walk

    return walk(obj, path, RESULTS_COPIED)


def replay_judge(folder, replies, name="replayed-judge") -> Path:
    """A models file (extending ocg's) whose entry `name` is a replay judge answering each
    (answer, concepts) of `replies` (a dict) with its reply; monkeypatch
    ocg.config.model_registry.MODELS_FILE to the path returned."""
    import yaml

    from ocg.config.model_registry import MODELS_FILE

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"instance_id": json.dumps([answer, list(concepts)]), "answer": reply})
        for (answer, concepts), reply in replies.items()
    ]
    (folder / "judge_replies.jsonl").write_text("\n".join(lines) + "\n")
    entry = {
        "id": "j",
        "backend": "replay",
        "replay": {"file": str(folder / "judge_replies.jsonl")},
    }
    path = folder / "models.yaml"
    path.write_text(yaml.safe_dump({"extends": str(MODELS_FILE), "models": {name: entry}}))
    return path


def scoring_with(**changes):
    """params/scoring.yaml's settings with `changes` on top, checked (ScoringFile): what a test
    passes as score_model's `scoring`."""
    from ocg.scoring import load_scoring_config

    return load_scoring_config(overrides=changes)


def checkout_copy(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new ones not ignored), copied into
    `dest`: a wheel is built from the copy, never in place, where setuptools would leave build/
    and ocg.egg-info in the checkout (the latter's stale metadata, entry points included, then
    shadows the installed package's for anything run from the checkout's root)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (PROJECT_ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT_ROOT / name, dest / name)
    return dest
