"""Paper scale on one machine: everything after generation, at the size of the paper.

    .venv/bin/python benchmarks/paper_scale.py [--models 36] [--subset-k K] [--out DIR]
    .venv/bin/python benchmarks/paper_scale.py --smoke [--out DIR] [--results DIR]   # seconds

36 replay entries (the paper's Table 5 models: their names and ids, answers from the synthetic
writer) x 3 conditions (original, ordered, ordered_one_shot) x 192 sets x 24 permutations x 6
templates = 82,944 answers per model, 2,985,984 in all, through the real path:
  1. generate   ocg.generate per model (replay backend: store, run card, prompt hashes)
  2. score      ocg.scoring.score_model per model, non-neural metrics (coverage, pBLEU,
                distinct-2, Diverse Rate), as notebook 02 calls it
  3. analyses   the analyses (ocg/jobs/plan.py) over all models through papermill, then index.html and the
                case browser, exactly as `ocg sweep` runs them
  4. verify     the scores the analyses read linked into the report (as `ocg report` pins them),
                then `ocg verify` on it: every invariant, I4 re-deriving Tables 1 and 4 from them
Each stage runs in its own process; printed per stage: wall time and peak memory (the summed
RSS of the stage's process tree, sampled every 0.2 s), and per model for 1-2. Then the disk: the
generations (store format 2: each prompt once, gzip'd) and the report (case-browser chunks gzip'd),
each beside its size in the previous format (c20dad0: every record with its prompt inline, chunks
as plain JSON), computed from the same files by writing them as that format did. Targets on the
2-core machine: scoring the 36 models under 10 minutes, analyses under 5 minutes, peak memory
under 8 GB, generations under 1.5 GB and the report under 0.5 GB. Outputs stay in --out
(default outputs/benchmarks/paper_scale; about 5 GB at full size) for a look at the report;
a rerun reuses finished stages (generation resumes, scoring is skipped when up to date) unless
--fresh.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import yaml
from recording import add_smoke_options, record, smoke_out, use_results

ROOT = Path(__file__).resolve().parents[1]
CONDITIONS = ["original", "ordered", "ordered_one_shot"]
STAGES = ("generate", "score", "analyses", "verify")


def paper_models(n: int) -> dict:
    """The first n models of the paper's sweep as replay entries (names, ids, paper names kept)."""
    from ocg.config.model_registry import load_models

    sweep = yaml.safe_load((ROOT / "params" / "sweeps" / "paper.yaml").read_text())
    specs = load_models()
    entries = {}
    for name in sweep["models"][:n]:
        spec = specs[name]
        entries[name] = {
            "backend": "replay",
            "id": spec.id,
            "paper_name": spec.paper_name,
            "paper_id": spec.paper_id,
            "batch_size": 2048,
        }
    return {"models": entries}


def dirs(out: Path):
    from ocg.core.layout import Outputs
    from ocg.jobs.plan import Dirs

    folders = Outputs(out)
    return Dirs(generations=folders.generations, scores=folders.scores, reports=folders.reports)


# --- stages (each runs in a child process: `--stage NAME`) --------------------------------------


def stage_generate(out: Path, models: list[str], subset_k: int | None) -> dict:
    from ocg.generation import generate

    per_model = {}
    for i, model in enumerate(models, 1):
        t = time.perf_counter()
        generate(
            model,
            conditions=CONDITIONS,
            subset_k=subset_k,
            out_dir=dirs(out).generations,
            models_file=out / "models.yaml",
            progress=False,
        )
        per_model[model] = round(time.perf_counter() - t, 2)
        print(f"  generate {i}/{len(models)} {model}: {per_model[model]:.1f} s", flush=True)
    return per_model


def stage_score(out: Path, models: list[str]) -> dict:
    from ocg.core.layout import ModelGenerations
    from ocg.scoring import cpu_families, score_model

    per_model = {}
    for i, model in enumerate(models, 1):
        t = time.perf_counter()
        score_model(
            ModelGenerations.of(model, dirs(out).generations).folder,
            metrics=cpu_families(),
            out_dir=dirs(out).scores,
            progress=False,
        )
        per_model[model] = round(time.perf_counter() - t, 2)
        print(f"  score {i}/{len(models)} {model}: {per_model[model]:.1f} s", flush=True)
    return per_model


def stage_analyses(out: Path, models: list[str]) -> dict:
    from ocg.core.layout import ExecutedNotebook
    from ocg.jobs.pipeline import load_run, run_step
    from ocg.jobs.plan import ANALYSES, analysis_steps
    from ocg.site.landing import write_index

    raw = {
        "name": "paper_scale",
        "models": models,
        "models_file": str(out / "models.yaml"),
        "analysis": list(ANALYSES),
        "conditions": CONDITIONS,
        "subset_k": None,
        "template_ids": None,
    }
    (out / "run.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    cfg = load_run(out / "run.yaml")  # checked, as `ocg sweep` checks its run
    d = dirs(out)
    per_notebook, pages = {}, []
    for notebook, params, _ in analysis_steps(cfg, d, models):
        t = time.perf_counter()
        run_step(notebook, params, d.reports, notebook)
        per_notebook[notebook] = round(time.perf_counter() - t, 2)
        pages.append((notebook, ExecutedNotebook(d.reports, notebook).page.name))
        print(f"  {notebook}: {per_notebook[notebook]:.1f} s", flush=True)
    t = time.perf_counter()
    write_index(
        d.reports,
        "ocg benchmark: paper scale",
        pages,
        run=cfg,
        scores_root=d.scores,
        generations_root=d.generations,
    )
    per_notebook["index.html + case browser"] = round(time.perf_counter() - t, 2)
    return per_notebook


def stage_verify(out: Path, models: list[str]) -> dict:
    """`ocg verify` on the analyses' report, its scores pinned first (hard links, as
    ocg/scoring/pinned.py links them: I4 re-derives from the report's own sets); the seconds of
    each, and what verify found."""
    import os

    from ocg.core.layout import SCORE_TABLES, ModelScores, ReportFolder
    from ocg.site.verify import verify

    d = dirs(out)
    t = time.perf_counter()
    for model in models:
        source = ModelScores.of(model, d.scores)
        pinned = ModelScores.of(model, ReportFolder(d.reports).scores)
        pinned.folder.mkdir(parents=True, exist_ok=True)
        for path in [*(source.table(name) for name in SCORE_TABLES), source.signature]:
            if path.exists() and not (pinned.folder / path.name).exists():
                os.link(path, pinned.folder / path.name)
    pin_s = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    verdict = verify(d.reports)
    verify_s = round(time.perf_counter() - t, 2)
    print(f"  {verdict.summary()}", flush=True)
    for line in verdict.lines()[:5] if verdict.broken else verdict.not_rederived:
        print(f"  {line}", flush=True)
    return {
        "pin scores": pin_s,
        "verify": verify_s,
        "checked": verdict.checked,
        "broken": len(verdict.broken),
        "not re-derived": len(verdict.not_rederived),
    }


# --- the driver ----------------------------------------------------------------------------------


def tree_rss(proc: psutil.Process) -> int:
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:  # the stage, or a child being listed, just ended
        tree = [proc]
    total = 0
    for p in tree:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_stage(stage: str, args) -> dict:
    """The stage in a child process; its wall time, peak tree RSS and its own report."""
    report = Path(args.out) / f"stage-{stage}.json"
    report.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        __file__,
        "--stage",
        stage,
        "--out",
        str(args.out),
        "--models",
        str(args.models),
    ]
    if args.subset_k:
        cmd += ["--subset-k", str(args.subset_k)]
    t = time.perf_counter()
    child = subprocess.Popen(cmd)
    peak, proc = 0, psutil.Process(child.pid)
    done = threading.Event()

    def sample():
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc))
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rc = child.wait()
    done.set()
    sampler.join()
    if rc != 0:
        sys.exit(f"stage {stage} failed (exit {rc})")
    return {
        "wall_s": round(time.perf_counter() - t, 1),
        "peak_rss_gb": round(peak / 2**30, 2),
        "parts_s": json.loads(report.read_text()),
    }


def tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def disk(out: Path) -> dict:
    """Bytes on disk now and in the previous formats, of the generations and the report; the
    generations also per record, now (store format 3) and as format 2 wrote the same records."""
    from ocg.core.layout import ModelGenerations
    from ocg.generation import GenerationStore
    from ocg.site.chunks import read_chunk

    d = dirs(out)
    gen_now = tree_bytes(d.generations)
    gen_before, stores_now, stores_f2, prompt_files, records = gen_now, 0, 0, 0, 0
    for folder in (
        (p for p in d.generations.iterdir() if p.is_dir()) if d.generations.exists() else []
    ):
        for store in ModelGenerations(folder).stores():
            prompts = ModelGenerations(folder).store(store.stem, prompts=True)
            on_disk = GenerationStore.read(
                store, prompts=False
            )  # format 2's records: no prompt, its sha256
            records += len(on_disk)
            stores_now += store.stat().st_size
            prompt_files += prompts.stat().st_size if prompts.exists() else 0
            stores_f2 += sum(
                len((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8")) for r in on_disk
            )
            # each record with its prompt inline, as c20dad0 wrote it
            gen_before += (
                sum(
                    len((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8"))
                    for r in GenerationStore.read(store)
                )
                - store.stat().st_size
            )
            gen_before -= prompts.stat().st_size if prompts.exists() else 0
    rep_now = tree_bytes(d.reports)
    rep_before, cases_now = rep_now, tree_bytes(d.reports / "cases")
    for chunk in sorted(
        d.reports.glob("cases/*.js")
    ):  # the chunk's JSON as a plain script, as c20dad0 wrote it
        payload = json.dumps(read_chunk(chunk), ensure_ascii=False, separators=(",", ":")).replace(
            "</", "<\\/"
        )
        rep_before += (
            len(
                f"window.OCG_CASES = window.OCG_CASES || {{}};\nOCG_CASES[{json.dumps(chunk.name)}] = "
                f"{payload};\n".encode()
            )
            - chunk.stat().st_size
        )
    return {
        "generations": [gen_now, gen_before],
        "report": [rep_now, rep_before],
        "report cases/": [cases_now, cases_now + rep_before - rep_now],
        "generation records": {
            "records": records,
            "format 3 stores": stores_now,
            "format 2 stores": stores_f2,
            "prompt files": prompt_files,
        },
    }


def per_record(sizes: dict) -> list[str]:
    """Generations bytes per record, format 3 beside format 2 (the same records, the same prompt
    files), and each times the paper's 2,985,984 answers: a linear extrapolation."""
    g = sizes["generation records"]
    n = max(g["records"], 1)
    paper = 36 * len(CONDITIONS) * 192 * 24 * 6
    lines = []
    for name in ("format 3", "format 2"):
        per = (g[f"{name} stores"] + g["prompt files"]) / n
        lines.append(
            f"disk: generations {name}: {per:.0f} bytes/record ({g[f'{name} stores'] / n:.0f} in the "
            f"store + {g['prompt files'] / n:.0f} in the prompt file, {g['records']:,} records); "
            f"linear extrapolation to 36 models x 82,944 answers: {per * paper / 1e9:.2f} GB (target < 1.5 GB)"
        )
    return lines


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, a smoke run's set (its --out a temporary folder unless given)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=36, help="how many of the paper's 36 models")
    parser.add_argument(
        "--subset-k", type=int, default=None, help="concept sets (default: all 192)"
    )
    default_out = ROOT / "outputs" / "benchmarks" / "paper_scale"
    parser.add_argument("--out", default=str(default_out))
    parser.add_argument(
        "--stages",
        default=None,
        help=f"comma-separated, of {','.join(STAGES)} (default: all; with --smoke generate,score)",
    )
    add_smoke_options(
        parser,
        "--models 1 --subset-k 1 (432 answers), the stages generate and score unless --stages "
        "names them (the analyses run every notebook: a minute)",
    )
    parser.add_argument("--fresh", action="store_true", help="delete --out first")
    parser.add_argument("--stage", help=argparse.SUPPRESS)  # internal: run one stage here
    args = parser.parse_args(argv)
    if not args.stage:  # a stage's child: its driver's arguments, as given
        use_results(args)
    if args.smoke:
        args.out = smoke_out(args, default_out, "paper_scale")
        args.models, args.subset_k = 1, 1
    # absolute: the analyses' run.yaml names models.yaml in it, a path relative to run.yaml
    args.out = str(Path(args.out).resolve())
    args.stages = args.stages or ("generate,score" if args.smoke else ",".join(STAGES))
    return args


def print_stages(results: dict, total: float, n_answers: int) -> None:
    """Each stage's wall time, peak memory and parts, and the targets they are held to."""
    print(
        f"\n{'stage':10s} {'wall':>9s} {'peak RSS':>9s}  per model (median / max) or per notebook"
    )
    for stage, r in results.items():
        parts = r["parts_s"]
        if stage in ("generate", "score"):
            detail = f"{statistics.median(parts.values()):.1f} s / {max(parts.values()):.1f} s"
        elif stage == "verify":
            detail = (
                f"pin {parts['pin scores']:.0f} s, verify {parts['verify']:.0f} s: "
                f"{parts['checked']:,} values, {parts['broken']} broken, "
                f"{parts['not re-derived']} table(s) not re-derived"
            )
        else:
            detail = ", ".join(f"{k} {v:.0f} s" for k, v in parts.items())
        print(f"{stage:10s} {r['wall_s']:8.1f}s {r['peak_rss_gb']:7.2f}GB  {detail}")
    print(
        f"{'whole':10s} {total:8.1f}s {max(r['peak_rss_gb'] for r in results.values()):7.2f}GB  "
        f"{n_answers:,} answers"
    )
    if "analyses" in results:
        a = results["analyses"]
        print(
            f"targets: analyses {a['wall_s'] / 60:.1f} min (< 5), peak memory {a['peak_rss_gb']:.2f} GB (< 8)"
        )
    if "verify" in results:
        r = results["verify"]
        print(f"verify: {r['wall_s'] / 60:.1f} min, peak memory {r['peak_rss_gb']:.2f} GB")
    if "score" in results:
        print(
            f"target: scoring {results['score']['wall_s'] / 60:.1f} min (< 10 for 36 models x 192 sets)"
        )


def main() -> None:
    args = parse()
    out = Path(args.out)
    if args.stage:
        models = list(yaml.safe_load((out / "models.yaml").read_text())["models"])
        parts = {
            "generate": lambda: stage_generate(out, models, args.subset_k),
            "score": lambda: stage_score(out, models),
            "analyses": lambda: stage_analyses(out, models),
            "verify": lambda: stage_verify(out, models),
        }[args.stage]()
        (out / f"stage-{args.stage}.json").write_text(json.dumps(parts))
        return

    if args.fresh and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "models.yaml").write_text(yaml.safe_dump(paper_models(args.models), sort_keys=False))
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        sys.exit(f"--stages: unknown {unknown}; known: {list(STAGES)}")
    print(
        f"paper scale: {args.models} models x {len(CONDITIONS)} conditions x "
        f"{args.subset_k or 192} sets x 24 permutations x 6 templates, in {out}",
        flush=True,
    )
    results, t0 = {}, time.perf_counter()
    for stage in stages:
        print(f"[{stage}]", flush=True)
        results[stage] = run_stage(stage, args)
    total = time.perf_counter() - t0
    n_answers = args.models * len(CONDITIONS) * (args.subset_k or 192) * 24 * 6
    print_stages(results, total, n_answers)
    sizes = disk(out)
    for what, target in (
        ("generations", " (target < 1.5 GB at full size)"),
        ("report", " (target < 0.5 GB at full size)"),
        ("report cases/", ""),
    ):
        now, before = sizes[what]
        print(
            f"disk: {what} {now / 1e9:.3f} GB{target}; c20dad0's format {before / 1e9:.3f} GB; "
            f"ratio {before / max(now, 1):.1f}x"
        )
    print("\n".join(per_record(sizes)))
    (out / "paper_scale.json").write_text(
        json.dumps(
            {
                "args": vars(args),
                "stages": results,
                "disk_bytes": sizes,
                "whole_s": round(total, 1),
                "answers": n_answers,
            },
            indent=1,
        )
    )
    record(
        "paper_scale",
        {
            "models": args.models,
            "answers": n_answers,
            "whole_s": round(total, 1),
            "stages": {
                s: {"wall_s": round(r["wall_s"], 1), "peak_rss_gb": r["peak_rss_gb"]}
                for s, r in results.items()
            },
            "disk_gb": {
                what: round(sizes[what][0] / 1e9, 3)
                for what in ("generations", "report", "report cases/")
            },
        },
        {k: v for k, v in vars(args).items() if k != "stage"},
    )


if __name__ == "__main__":
    main()
