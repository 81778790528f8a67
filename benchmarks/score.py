"""Speed of the non-neural metrics on one model's worth of answers (55,296; and 24,960 of five concepts).

    .venv/bin/python benchmarks/score.py [--loop-groups 200] [--previous c20dad0]
    .venv/bin/python benchmarks/score.py --smoke [--results DIR]   # seconds: one concept set

Answers are realistic: templated sentences over each instance's concepts in varied orders and
inflections, with duplicates inside groups (about 30%), as models produce. Prints:
  1. coverage (with PoS-correct coverage) + pBLEU + distinct-2 + Diverse Rate + non-words (every CPU
     family) for all 55,296 answers through `score_model`, each family's seconds, the new ones apart;
     then the same scoring by this checkout's code and by the code of `--previous` (default
     c20dad0, before the speed work: no token-form memo, spaCy's lemmatizer as is, the garbage collector
     on), each in a fresh process, one after the other on the same answers: wall and CPU seconds
     (the workers' included) and the ratio. On a shared machine the CPU seconds are the fairer;
     1b. the same for five concepts: 208 sets x 120 permutations (template 0, `ordered`: 24,960
     answers, 208 groups of 14,280 ordered pairs each, 2,970,240 pairs), answers and pairs per second;
  2. pBLEU vectorised vs the sacrebleu `sentence_bleu` loop on the same groups, and the ratio;
  3. coverage of the same answers (a sample): spaCy as shipped (every component, NER and the
     parser included; one process, BLIS, its Matcher) vs ocg's path with the pipeline
     params/scoring.yaml chooses (`spacy_pipeline`; numpy BLAS, indexed attribute ruler, worker
     processes), the ratio, and whether every verdict and token is the same; `--pipeline
     no_parser` times the parser-less choice instead (its verdicts may then differ).
Targets on the 2-core CPU machine: (1) under 15 s (20 s before the speed work); (2) vectorised at
least 20x faster; (1b) under 20 s (docs/METHODS.md, "Five concepts and sampled permutations").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from recording import add_smoke_options, record, use_results

from ocg.core.layout import ModelGenerations, ModelScores, Outputs
from ocg.data import build_instances, load_concept_sets, load_templates
from ocg.generation import GenerationStore
from ocg.metrics import coverage
from ocg.metrics.bleu import pairwise_bleu, pairwise_bleu_loop
from ocg.records import Signature
from ocg.scoring import cpu_families, load_scoring_config, score_model

FORMS = {
    "catch": "caught",
    "throw": "threw",
    "ride": "rides",
    "sit": "sat",
    "run": "runs",
    "cut": "cut",
    "jump": "jumped",
    "push": "pushed",
    "use": "uses",
    "eat": "ate",
}
OPENERS = ["The", "A", "Every morning the", "Yesterday a", "In the park, the", "My"]
GLUE = ["and", "with", "near", "while", "before", "on", "by", "as the", "then", "for"]
ENDINGS = [".", " today.", " in the evening.", " again.", "!", " with great care."]


def sentence(rng: random.Random, concepts: list[str]) -> str:
    words = list(concepts)
    if rng.random() < 0.4:  # models often reorder the concepts
        rng.shuffle(words)
    parts = [rng.choice(OPENERS)]
    for i, w in enumerate(words):
        parts.append(FORMS.get(w, w) if rng.random() < 0.5 else w)
        if i < len(words) - 1:
            parts.append(rng.choice(GLUE))
    return " ".join(parts) + rng.choice(ENDINGS)


def make_generations(
    root: Path,
    n_concepts: int = 4,
    conditions=("original", "ordered"),
    template_ids: list[int] | None = None,
    sets: int | None = None,
) -> Path:
    """Answers to every instance of the first `sets` concept sets (None: all)."""
    rng = random.Random(0)
    instances = build_instances(
        load_concept_sets(n_concepts)[:sets], load_templates(), list(conditions), template_ids
    )
    model_dir = ModelGenerations.of("bench-model", root).folder
    for cond, rows in instances.groupby("condition"):
        records: list[dict] = []
        group_answers: dict[tuple, list] = {}
        for row in rows.itertuples():
            key = (row.template_id, row.set_id)
            seen = group_answers.setdefault(key, [])
            answer = (
                rng.choice(seen)
                if seen and rng.random() < 0.3
                else sentence(rng, list(row.concepts))
            )
            seen.append(answer)
            records.append(
                {
                    "instance_id": row.instance_id,
                    "model": "bench-model",
                    "condition": cond,
                    "template_id": row.template_id,
                    "set_id": row.set_id,
                    "perm_index": row.perm_index,
                    "concepts": list(row.concepts),
                    "pos_pattern": row.pos_pattern,
                    "answer": answer,
                    "answer_status": "ok",
                }
            )
        GenerationStore(ModelGenerations(model_dir).store(cond)).append(records)
    return model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--loop-groups", type=int, default=200, help="groups for the side-by-side pBLEU"
    )
    parser.add_argument(
        "--coverage-answers", type=int, default=10_000, help="answers for the side-by-side coverage"
    )
    parser.add_argument(
        "--pipeline",
        choices=list(coverage.SPACY_PIPELINES),
        default=None,
        help="spaCy pipeline for lines 1 and 3 (default: params/scoring.yaml's)",
    )
    parser.add_argument(
        "--previous", default="c20dad0", help="git revision whose scoring line 1 compares with"
    )
    add_smoke_options(
        parser,
        "every line on the first concept set of each size (288 and 120 answers), "
        "--loop-groups 2 --coverage-answers 50",
    )
    args = parser.parse_args()
    use_results(args)
    sets = None
    if args.smoke:
        sets, args.loop_groups, args.coverage_answers = 1, 2, 50
    pipeline = args.pipeline or load_scoring_config().spacy_pipeline
    print(
        f"spaCy pipeline: {pipeline} ({', '.join(coverage.load_nlp('auto', pipeline).pipe_names)})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        figures = {"pipeline": pipeline}
        answers, figures["n4"] = score_workload(
            Path(tmp) / "n4", "n = 4", "(target < 15 s)", pipeline=pipeline, sets=sets
        )
        figures["vs_previous"] = compare_with_previous(Path(tmp), args.previous, pipeline)
        _, figures["n5"] = score_workload(
            Path(tmp) / "n5",
            "n = 5",
            "",
            pipeline=pipeline,
            n_concepts=5,
            conditions=["ordered"],
            template_ids=[0],
            sets=sets,
        )

        groups = [
            list(g.answer) for _, g in answers.groupby(["condition", "template_id", "set_id"])
        ]
        sample = random.Random(1).sample(groups, min(args.loop_groups, len(groups)))
        t = time.perf_counter()
        fast = [pairwise_bleu(g) for g in sample]
        t_fast = time.perf_counter() - t
        t = time.perf_counter()
        slow = [pairwise_bleu_loop(g) for g in sample]
        t_slow = time.perf_counter() - t
        worst = max(abs(a - b) for a, b in zip(fast, slow))
        print(
            f"2. pBLEU on {len(sample)} groups ({len(sample) * 552:,} pairs): vectorised {t_fast:.2f} s, "
            f"sacrebleu loop {t_slow:.2f} s, ratio {t_slow / t_fast:.1f}x (target >= 20x); "
            f"max |difference| {worst:.2e}"
        )
        figures["pbleu_loop"] = {
            "groups": len(sample),
            "vectorised_s": round(t_fast, 2),
            "loop_s": round(t_slow, 2),
            "ratio": round(t_slow / t_fast, 1),
            "max_difference": worst,
        }

        sample = answers.sample(min(args.coverage_answers, len(answers)), random_state=0)
        print(
            f"3. coverage of {len(sample):,} answers ({sample.answer.nunique():,} distinct):",
            end=" ",
            flush=True,
        )
        t = time.perf_counter()
        shipped = shipped_coverage(sample)
        t_shipped = time.perf_counter() - t
        t = time.perf_counter()
        nlp = coverage.load_nlp("auto", pipeline)
        ours = coverage.score_coverage(
            sample.answer,
            sample.concepts,
            nlp,
            pos_patterns=sample.pos_pattern,
            n_process=coverage.processes(),
        )
        t_ours = time.perf_counter() - t
        same = all(
            (ours[c].tolist() == shipped[c].tolist())
            for c in ("all_present", "in_order", "tokens", "match_positions", "order_positions")
        )
        print(
            f"spaCy as shipped {t_shipped:.1f} s, ocg {t_ours:.1f} s ({coverage.processes()} processes), "
            f"ratio {t_shipped / t_ours:.1f}x; identical verdicts, positions and tokens: {same}"
        )
        figures["coverage_vs_spacy"] = {
            "answers": len(sample),
            "shipped_s": round(t_shipped, 1),
            "ocg_s": round(t_ours, 1),
            "identical": same,
        }
    record("score", figures, vars(args))


NEW_CPU_FAMILIES = (
    "nonword",
)  # the quality metrics; PoS-correct coverage is part of the coverage family


def score_workload(root: Path, label: str, target: str, pipeline: str, **workload):
    """Line 1 (n = 4: 192 sets x 24 permutations x 6 templates x 2 conditions) or 1b (n = 5: 208
    sets x 120 permutations, template 0, `ordered`): the four metrics through `score_model`, in
    answers per second and pBLEU ordered pairs per second (k(k-1) per group of k answers)."""
    import pandas as pd

    model_dir = make_generations(root, **workload)
    t0 = time.perf_counter()
    out = score_model(
        model_dir,
        metrics=cpu_families(),
        out_dir=Outputs(root).scores,
        progress=False,
        scoring=load_scoring_config(overrides={"spacy_pipeline": pipeline}),
    )
    total = time.perf_counter() - t0
    answers = pd.read_parquet(ModelScores(out).answers)
    timings = Signature.read(ModelScores(out).signature).timings_s or {}
    sizes = answers.groupby(["condition", "template_id", "set_id"]).size()
    pairs = int((sizes * (sizes - 1)).sum())
    print(
        f"1{'b' * (label != 'n = 4')}. {label}: {len(answers):,} answers ({answers.answer.nunique():,} distinct) in "
        f"{len(sizes):,} groups of {int(sizes.max())}: every CPU family ({', '.join(cpu_families())}) in "
        f"{total:.1f} s{' ' + target if target else ''} = {len(answers) / total:,.0f} answers/s; pBLEU {pairs:,} pairs in "
        f"{timings.get('pbleu', float('nan')):.1f} s = {pairs / max(timings.get('pbleu', 0), 1e-9):,.0f} pairs/s; "
        f"parts: {timings}",
        flush=True,
    )
    new = {f: timings.get(f) for f in NEW_CPU_FAMILIES if f in timings}
    print(
        f"    new CPU metrics: {new} s beside today's "
        f"{ {f: t for f, t in timings.items() if f not in new} } s; PoS-correct coverage is computed within "
        "coverage's spaCy pass (its time is in coverage's)",
        flush=True,
    )
    return answers, {"answers": len(answers), "seconds": round(total, 1), "parts_s": timings}


SCORE_ONCE = """import sys, time
import ocg
from ocg.scoring import score_model
try:
    from ocg.scoring import cpu_families
    metrics = cpu_families()
except ImportError:  # code from before cpu_families: the four of the paper
    metrics = ["coverage", "pbleu", "distinct", "diverse"]
import inspect
asked = dict(metrics=metrics, out_dir=sys.argv[2], progress=False)
if "scoring" in inspect.signature(score_model).parameters:  # the checked settings, whole
    from ocg.scoring import load_scoring_config
    asked["scoring"] = load_scoring_config(overrides={"spacy_pipeline": sys.argv[3]})
else:  # code from before (the --previous revision): keyword overrides, which took any key
    asked["spacy_pipeline"] = sys.argv[3]
t = time.perf_counter()
score_model(sys.argv[1], **asked)
print(ocg.__file__, ",".join(metrics), time.perf_counter() - t)
"""


def timed_scoring(
    code: Path, model_dir: Path, out: Path, pipeline: str
) -> tuple[float, float, str]:
    """(wall, CPU) seconds of `score_model` over model_dir by the ocg package under `code` (every CPU
    family that code knows), in a fresh process (CPU: that process and its workers), and the families."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # cwd: `python -c` puts the working directory first on sys.path, before PYTHONPATH; run from the
    # checkout, it would import this checkout's ocg whatever `code` says. The ocg imported is checked.
    done = subprocess.run(
        [sys.executable, "-c", SCORE_ONCE, str(model_dir), str(out), pipeline],
        check=True,
        capture_output=True,
        text=True,
        cwd=out.parent,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    imported, families, seconds = done.stdout.split()[-3:]
    if Path(imported).resolve() != (code / "ocg" / "__init__.py").resolve():
        raise RuntimeError(f"scoring under {code} imported {imported}")
    return (
        float(seconds),
        (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        families,
    )


def plain_copy(model_dir: Path, to: Path) -> Path:
    """The stores of model_dir with each record as a whole JSON object (format 2, no prompts to
    keep): what code from before store format 3 reads too."""
    from ocg.core.files import loads_json
    from ocg.generation.answer_store.record_format import read_record

    to.mkdir(parents=True)
    for store in model_dir.glob("*.jsonl"):
        with (
            open(store, encoding="utf-8") as lines,
            open(to / store.name, "w", encoding="utf-8") as out,
        ):
            for n, line in enumerate(lines, 1):
                out.write(
                    json.dumps(read_record(loads_json(line), f"{store}:{n}"), ensure_ascii=False)
                    + "\n"
                )
    return to


def compare_with_previous(tmp: Path, revision: str, pipeline: str) -> dict:
    """Line 1 again, by this checkout and by `revision`'s code, side by side on the same answers."""
    root = Path(__file__).resolve().parents[1]
    archive = tmp / "previous.tar"
    subprocess.run(["git", "-C", str(root), "archive", "-o", str(archive), revision], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp / "previous", filter="data")
    model_dir = plain_copy(
        ModelGenerations.of("bench-model", tmp / "n4").folder, tmp / "plain" / "bench-model"
    )
    now = timed_scoring(root, model_dir, tmp / "now", pipeline)
    before = timed_scoring(tmp / "previous", model_dir, tmp / "before", pipeline)
    print(
        f"1 vs {revision}: this checkout ({now[2]}) {now[0]:.1f} s wall, {now[1]:.1f} s CPU; {revision} "
        f"({before[2]}) {before[0]:.1f} s wall, {before[1]:.1f} s CPU; ratio {before[0] / now[0]:.2f}x wall, "
        f"{before[1] / now[1]:.2f}x CPU; this checkout costs {now[1] / before[1]:.2f}x the CPU of {revision} "
        "(target: the new CPU metrics at most 1.3x the four of before them)",
        flush=True,
    )
    return {
        "revision": revision,
        "wall_s": round(now[0], 1),
        "cpu_s": round(now[1], 1),
        "previous_wall_s": round(before[0], 1),
        "previous_cpu_s": round(before[1], 1),
        "cpu_cost_vs_previous": round(now[1] / before[1], 2),
    }


def shipped_coverage(sample):
    """Coverage through spaCy exactly as installed: every component, nlp.pipe in one process,
    default ops."""
    import spacy

    nlp = spacy.load(coverage.resolve_spacy_model())
    table = coverage.lemma_lookup()
    texts = [a if isinstance(a, str) else "" for a in sample.answer]
    unique = list(dict.fromkeys(texts))
    forms = {
        t: coverage.token_forms(doc, table)[coverage.DEFAULT_RULE]
        for t, doc in zip(unique, nlp.pipe(unique))
    }
    import pandas as pd

    return pd.DataFrame(
        [
            coverage.match(forms[t], list(c), p)
            for t, c, p in zip(texts, sample.concepts, sample.pos_pattern)
        ]
    )


if __name__ == "__main__":
    main()
