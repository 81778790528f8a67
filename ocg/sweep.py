"""Sweeps: many models, each running notebooks 01 and 02, then the analyses once over all.

One plan, two executors. Every model task is the same command,
`python -m ocg.cli sweep FILE --task MODEL`, run one after another here (local) or as one Slurm
array task per model (slurm). Each task writes a completion marker per notebook, or a
failed.json saying why; `--status` reads those and Slurm's queue. A re-run submits only the
models that are neither done nor running; a failing model never stops the others.

Layout under the sweep's `outputs` directory:
  generations/<model>/, scores/<model>/        what notebooks 01 and 02 write
  notebooks/<model>/<notebook>.{ipynb,html}    executed notebooks of each model
  status/<sweep name>/<model>/<notebook>.done, failed.json  completion markers (per sweep name,
                                               so sweeps can share generations: Table 4's adds
                                               one-shot answers beside the paper sweep's)
  logs/<model>.log, logs/slurm-<job>_<index>.out, logs/analysis.log
  reports/<sweep name>/                        analyses 03-09, tables, figures, index.html
  slurm/array.sbatch, analysis.sbatch, manifest.json
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path


from .errors import OcgInputError
from .io import atomic_path, read_json, read_yaml, write_json
from .paths import PROJECT_ROOT
from .plan import Dirs, analysis_steps, model_steps
from .runconfig import check_common

RESOURCE_KEYS = {"gpus": int, "cpus": int, "mem": str, "time": str}
SLURM_KEYS = {"partition": (str, type(None)), "account": (str, type(None)), "throttle": int,
              "extra_args": list, "analysis": dict}
ACTIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING",
                 "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED"}
FAILED_STATES = {"FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                 "BOOT_FAIL", "DEADLINE"}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# -- the sweep file --------------------------------------------------------------------------------

def _check_resources(where: str, res: object) -> dict:
    if not isinstance(res, dict):
        raise OcgInputError(where, "expected a mapping of gpus, cpus, mem, time")
    for key, value in res.items():
        if key not in RESOURCE_KEYS:
            raise OcgInputError(f"{where}.{key}", f"unknown resource; known: {sorted(RESOURCE_KEYS)}")
        if not isinstance(value, RESOURCE_KEYS[key]) or isinstance(value, bool):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}")
        if key in ("gpus", "cpus") and value < (0 if key == "gpus" else 1):
            raise OcgInputError(f"{where}.{key}", f"got {value}; expected {'>= 0' if key == 'gpus' else '>= 1'}")
        if key == "time" and not TIME_RE.match(value):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected Slurm's [D-]HH:MM:SS")
        if key == "mem" and not re.match(r"^\d+[KMGT]?$", value):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected e.g. 16G or 500M")
    return res


TIME_RE = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")  # Slurm: [D-]HH[:MM[:SS]] or MM


def load_sweep(path: str | Path) -> dict:
    """A sweep file, validated completely before any work (ocg/runconfig.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_common(read_yaml(path), path, {"outputs": None, "resources": {}, "slurm": {}})
    src = str(path)
    if not isinstance(sweep["outputs"], str) or not sweep["outputs"].strip():
        raise OcgInputError(f"{src}: outputs", "missing: the folder this sweep writes (relative to the "
                                               "project root, or absolute)")
    res = sweep["resources"]
    if not isinstance(res, dict):
        raise OcgInputError(f"{src}: resources", "expected a mapping with default and models")
    _check_resources(f"{src}: resources.default", res.get("default", {}))
    models = res.get("models") or {}
    if not isinstance(models, dict):
        raise OcgInputError(f"{src}: resources.models", "expected a mapping of model: resources")
    for model, r in models.items():
        if model not in sweep["models"]:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
        _check_resources(f"{src}: resources.models.{model}", r)
    extra = sorted(set(res) - {"default", "models"})
    if extra:
        raise OcgInputError(f"{src}: resources.{extra[0]}", "unknown key; known: default, models")
    if not isinstance(sweep["slurm"], dict):
        raise OcgInputError(f"{src}: slurm", "expected a mapping")
    slurm = {"partition": None, "account": None, "throttle": 8, "extra_args": [],
             "analysis": {"cpus": 2, "mem": "8G", "time": "02:00:00", "gpus": 0}, **sweep["slurm"]}
    for key, value in slurm.items():
        if key not in SLURM_KEYS or not isinstance(value, SLURM_KEYS[key]) or isinstance(value, bool):
            raise OcgInputError(f"{src}: slurm.{key}", f"unknown key or bad value {value!r}")
    if slurm["throttle"] < 1:
        raise OcgInputError(f"{src}: slurm.throttle", f"got {slurm['throttle']}; expected >= 1")
    _check_resources(f"{src}: slurm.analysis", slurm["analysis"])
    sweep["slurm"] = slurm
    out = Path(sweep["outputs"])
    sweep["outputs"] = str(out if out.is_absolute() else (PROJECT_ROOT / out).resolve())
    sweep["file"] = src
    return sweep


def resources_for(sweep: dict, model: str) -> dict:
    base = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"}
    res = sweep["resources"]
    return {**base, **res.get("default", {}), **(res.get("models") or {}).get(model, {})}


# -- paths and markers -----------------------------------------------------------------------------

def out_dir(sweep: dict) -> Path:
    return Path(sweep["outputs"])


def status_dir(sweep: dict, model: str) -> Path:
    return out_dir(sweep) / "status" / sweep["name"] / model


def analysis_marker(sweep: dict) -> Path:
    return out_dir(sweep) / "status" / sweep["name"] / "analysis.json"


def sweep_dirs(sweep: dict) -> Dirs:
    out = out_dir(sweep)
    return Dirs(generations=out / "generations", scores=out / "scores", reports=out / "reports" / sweep["name"])


def task_command(sweep: dict, model: str = "$MODEL") -> list[str]:
    """The command every model task runs, here or on a Slurm node."""
    return [sys.executable, "-m", "ocg.cli", "sweep", sweep["file"], "--task", model]


# -- one model task (the same under both executors) ------------------------------------------------

def run_model_task(sweep: dict, model: str) -> int:
    """Run the model's notebooks in order; mark each done, or write failed.json and stop."""
    from .notebooks import run_notebook

    if model not in sweep["models"]:
        raise OcgInputError(sweep["file"], f"{model!r} is not a model of this sweep")
    status = status_dir(sweep, model)
    status.mkdir(parents=True, exist_ok=True)
    (status / "failed.json").unlink(missing_ok=True)
    job = {k: os.environ.get(k) for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")
           if os.environ.get(k)}
    for notebook, params in model_steps(sweep, sweep_dirs(sweep), model):
        marker = status / f"{notebook}.done"
        if marker.exists():
            print(f"[{model}] {notebook}: done already", flush=True)
            continue
        print(f"[{model}] {notebook}: running", flush=True)
        t0 = time.time()
        try:
            executed = run_notebook(notebook, params, out_dir=out_dir(sweep) / "notebooks" / model)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded for --status
            reason = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
            cell = getattr(exc, "exec_count", None)
            write_json(status / "failed.json", {
                "model": model, "notebook": notebook, "cell": cell, "reason": reason.strip()[:2000],
                "executed_notebook": str(out_dir(sweep) / "notebooks" / model / f"{notebook}.ipynb"),
                "log": str(out_dir(sweep) / "logs" / f"{model}.log"), "time_utc": _now(),
                "host": socket.gethostname(), **job})
            print(f"[{model}] {notebook}: FAILED in cell {cell}: {reason}", flush=True)
            traceback.print_exc()
            return 1
        write_json(marker, {"model": model, "notebook": notebook, "executed_notebook": str(executed),
                            "seconds": round(time.time() - t0, 1), "time_utc": _now(),
                            "host": socket.gethostname(), **job})
    print(f"[{model}] done", flush=True)
    return 0


def run_analysis(sweep: dict) -> int:
    """Notebooks 03-09 once over every model whose scoring is done."""
    from .analysis.report import write_index
    from .pipeline import StepFailed, run_step

    done = [m for m in sweep["models"] if model_state(sweep, m)[0] == "done"]
    marker = analysis_marker(sweep)
    if not done:
        print("no finished model to analyse", flush=True)
        write_json(marker, {"state": "failed", "reason": "no finished model", "time_utc": _now()})
        return 1
    reports = sweep_dirs(sweep).reports
    pages = []
    for notebook, params in analysis_steps(sweep, sweep_dirs(sweep), done):
        print(f"[analysis] {notebook} over {done}", flush=True)
        try:
            executed = run_step(notebook, params, reports, notebook)
        except StepFailed as exc:
            print(f"[analysis] {exc}", flush=True)
            write_json(marker, {"state": "failed", "reason": str(exc), "models": done, "time_utc": _now()})
            return 1
        pages.append((notebook, executed.with_suffix(".html").name))
    index = write_index(reports, f"ocg sweep: {sweep['name']}", pages,
                        notes=[f"models: {', '.join(done)}"])
    write_json(marker, {"state": "done", "report": str(index), "models": done, "time_utc": _now()})
    print(f"[analysis] report: {index}", flush=True)
    return 0


# -- state -----------------------------------------------------------------------------------------

def model_state(sweep: dict, model: str, jobs: dict[str, str] | None = None) -> tuple[str, str]:
    """(done | running | failed | missing, detail) from markers, and Slurm states if given."""
    status = status_dir(sweep, model)
    if all((status / f"{nb}.done").exists() for nb in sweep["notebooks"]):
        return "done", "all notebooks finished"
    state = (jobs or {}).get(model)
    if state in ACTIVE_STATES:
        return "running", f"slurm {state}"
    if (status / "failed.json").exists():
        f = read_json(status / "failed.json")
        return "failed", f"{f['notebook']} cell {f.get('cell')}: {f['reason'][:300]} (log: {f['log']})"
    if state in FAILED_STATES or state == "COMPLETED":
        return "failed", f"slurm {state} without a completion marker (see {out_dir(sweep) / 'logs'})"
    return "missing", "not run yet"


def manifest_path(sweep: dict) -> Path:
    return out_dir(sweep) / "slurm" / "manifest.json"


def slurm_states(sweep: dict) -> dict[str, str]:
    """Latest Slurm state of each model's array task (squeue; needs finished jobs kept visible,
    or sacct where accounting is on)."""
    path = manifest_path(sweep)
    if not path.exists():
        return {}
    manifest = read_json(path)
    latest: dict[str, tuple[str, int]] = {}
    for sub in manifest["submissions"]:
        for index, model in sub["tasks"].items():
            latest[model] = (sub["job_id"], int(index))
    states = {}
    for job_id in sorted({j for j, _ in latest.values()}):
        found = _job_states(job_id)
        for model, (jid, index) in latest.items():
            if jid == job_id and index in found:
                states[model] = found[index]
    return states


def _job_states(job_id: str) -> dict[int, str]:
    out = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", job_id, "-o", "%K|%T"],
                         capture_output=True, text=True, timeout=30)
    states = {}
    for line in out.stdout.splitlines():
        index, _, state = line.partition("|")
        if index.strip().isdigit():
            states[int(index)] = state.strip()
    if states:
        return states
    acct = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"],
                          capture_output=True, text=True, timeout=30)
    for line in acct.stdout.splitlines():
        jid, _, state = line.partition("|")
        if "_" in jid and jid.split("_")[1].isdigit():
            states[int(jid.split("_")[1])] = state.split()[0] if state else state
    return states


def status_table(sweep: dict, with_slurm: bool = True) -> list[tuple[str, str, str]]:
    jobs = {}
    if with_slurm:
        try:
            jobs = slurm_states(sweep)
        except (OSError, subprocess.SubprocessError):
            jobs = {}
    return [(m, *model_state(sweep, m, jobs)) for m in sweep["models"]]


def print_status(sweep: dict) -> None:
    rows = status_table(sweep)
    width = max(len(m) for m, _, _ in rows)
    for model, state, detail in rows:
        print(f"{model:<{width}}  {state:<8} {detail}")
    counts = {s: sum(1 for _, st, _ in rows if st == s) for s in ("done", "running", "failed", "missing")}
    print("  ".join(f"{k}: {v}" for k, v in counts.items()))
    marker = analysis_marker(sweep)
    if marker.exists():
        a = read_json(marker)
        detail = a.get("report") or a.get("reason", "").splitlines()[0]
        print(f"analysis: {a['state']} over {len(a.get('models', []))} model(s): {detail}")
    else:
        print("analysis: not run yet")


# -- executors -------------------------------------------------------------------------------------

def to_run(sweep: dict, with_slurm: bool) -> list[str]:
    return [m for m, state, _ in status_table(sweep, with_slurm) if state in ("missing", "failed")]


def run_local(sweep: dict) -> int:
    """Each pending model's task as a subprocess, one after another; then the analyses."""
    logs = out_dir(sweep) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=False)
    failed = 0
    print(f"sweep {sweep['name']}: {len(pending)} model(s) to run: {pending}", flush=True)
    for model in pending:
        with (logs / f"{model}.log").open("a") as log:
            code = subprocess.call(task_command(sweep, model), stdout=log, stderr=subprocess.STDOUT,
                                   cwd=PROJECT_ROOT)
        outcome = "done" if code == 0 else f"FAILED (exit {code}), see {logs / model}.log"
        print(f"  {model}: {outcome}", flush=True)
        failed += code != 0
    analysed = analysis_marker(sweep)
    stale = not analysed.exists() or read_json(analysed)["state"] != "done"
    analysis_code = 0
    if sweep["analysis"] and (pending or stale):
        with (logs / "analysis.log").open("a") as log:
            analysis_code = subprocess.call([sys.executable, "-m", "ocg.cli", "sweep", sweep["file"], "--analysis"],
                                            stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT)
    print_status(sweep)
    still_failed = [m for m, state, _ in status_table(sweep, with_slurm=False) if state == "failed"]
    if still_failed or analysis_code:
        print(f"ocg: {len(still_failed)} model(s) failed: {still_failed}" if still_failed else
              "ocg: the analyses failed (see logs/analysis.log)", file=sys.stderr)
        return 1
    return 0


def _sbatch_resources(res: dict) -> list[str]:
    args = [f"--cpus-per-task={res['cpus']}", f"--mem={res['mem']}", f"--time={res['time']}"]
    if res["gpus"]:
        args.append(f"--gres=gpu:{res['gpus']}")
    return args


def write_array_script(sweep: dict) -> Path:
    out = out_dir(sweep)
    models = " ".join(sweep["models"])
    cmd = " ".join(task_command(sweep, '"$MODEL"'))
    script = f"""#!/bin/bash
# ocg sweep {sweep['name']}: one array task per model (index = position in the sweep's model list).
# Resources are given per submission on the sbatch command line (see manifest.json).
#SBATCH --job-name=ocg-{sweep['name']}
#SBATCH --output={out}/logs/slurm-%A_%a.out
#SBATCH --requeue
#SBATCH --open-mode=append
set -uo pipefail
MODELS=({models})
MODEL="${{MODELS[$SLURM_ARRAY_TASK_ID]}}"
cd {PROJECT_ROOT}
echo "[$(date -u +%FT%TZ)] task $SLURM_ARRAY_TASK_ID: $MODEL on $(hostname) (job $SLURM_JOB_ID)" >> "{out}/logs/$MODEL.log"
{cmd} >> "{out}/logs/$MODEL.log" 2>&1
"""
    path = out / "slurm" / "array.sbatch"
    with atomic_path(path) as tmp:
        tmp.write_text(script)
    os.chmod(path, 0o755)
    analysis = f"""#!/bin/bash
# ocg sweep {sweep['name']}: the analyses (03-09) once over every finished model.
#SBATCH --job-name=ocg-{sweep['name']}-analysis
#SBATCH --output={out}/logs/analysis.log
#SBATCH --open-mode=append
set -uo pipefail
cd {PROJECT_ROOT}
{sys.executable} -m ocg.cli sweep {sweep['file']} --analysis
"""
    apath = out / "slurm" / "analysis.sbatch"
    with atomic_path(apath) as tmp:
        tmp.write_text(analysis)
    os.chmod(apath, 0o755)
    return path


def _sbatch(args: list[str]) -> str:
    proc = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"sbatch {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip().split(";")[0]


def submit_slurm(sweep: dict, dry_run: bool = False) -> dict:
    """Submit the models that are neither done nor running, grouped by resources; then the
    analyses as a job that depends on them (afterany: a failed model does not block it)."""
    out = out_dir(sweep)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=True)
    script = write_array_script(sweep)
    manifest = read_json(manifest_path(sweep)) if manifest_path(sweep).exists() else \
        {"sweep": sweep["name"], "file": sweep["file"], "submissions": [], "analysis_jobs": []}
    common = [f"--{k}={sweep['slurm'][k]}" for k in ("partition", "account") if sweep["slurm"][k]]
    common += list(sweep["slurm"]["extra_args"])
    groups: dict[tuple, list[str]] = {}
    for model in pending:
        groups.setdefault(tuple(sorted(resources_for(sweep, model).items())), []).append(model)
    job_ids = []
    for key, models in groups.items():
        res = dict(key)
        indices = {sweep["models"].index(m): m for m in models}
        array = ",".join(str(i) for i in sorted(indices)) + f"%{sweep['slurm']['throttle']}"
        args = [f"--array={array}", *_sbatch_resources(res), *common, str(script)]
        for m in models:
            (status_dir(sweep, m)).mkdir(parents=True, exist_ok=True)
        job_id = "DRY-RUN" if dry_run else _sbatch(args)
        job_ids.append(job_id)
        manifest["submissions"].append({"job_id": job_id, "time_utc": _now(), "resources": res,
                                        "tasks": {str(i): m for i, m in sorted(indices.items())},
                                        "sbatch_args": args})
    if sweep["analysis"] and (job_ids or not manifest["analysis_jobs"]):
        deps = [f"--dependency=afterany:{':'.join(job_ids)}"] if job_ids and not dry_run else []
        args = [*deps, *_sbatch_resources({**{"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"},
                                           **sweep["slurm"]["analysis"]}), *common,
                str(out / "slurm" / "analysis.sbatch")]
        analysis_id = "DRY-RUN" if dry_run else _sbatch(args)
        manifest["analysis_jobs"].append({"job_id": analysis_id, "after": job_ids, "time_utc": _now(),
                                          "sbatch_args": args})
    if not dry_run:
        write_json(manifest_path(sweep), manifest)
    print(f"sweep {sweep['name']}: submitted {len(pending)} model(s) {pending} as job(s) {job_ids}",
          flush=True)
    return manifest


def wait_slurm(sweep: dict, timeout_s: float = 24 * 3600, poll_s: float = 5.0) -> bool:
    """Follow the sweep's jobs (model arrays and analyses) until none is queued or running."""
    manifest = read_json(manifest_path(sweep))
    ids = sorted({s["job_id"] for s in manifest["submissions"]} |
                 {a["job_id"] for a in manifest["analysis_jobs"]})
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        proc = subprocess.run(["squeue", "-h", "-r", "-j", ",".join(ids), "-o", "%i|%T"],
                              capture_output=True, text=True, timeout=30)
        active = [l for l in proc.stdout.splitlines() if l.split("|")[-1] in ACTIVE_STATES]
        if not active:
            return True
        time.sleep(poll_s)
    return False


def run_sweep(path: str | Path, executor: str = "local", wait: bool = False, status: bool = False,
              task: str | None = None, analysis: bool = False, dry_run: bool = False,
              wait_timeout_s: float = 24 * 3600) -> int:
    sweep = load_sweep(path)
    if task:
        return run_model_task(sweep, task)
    if analysis:
        return run_analysis(sweep)
    if status:
        print_status(sweep)
        return 0
    if executor == "local":
        return run_local(sweep)
    if executor == "slurm":
        submit_slurm(sweep, dry_run=dry_run)
        if wait and not dry_run:
            finished = wait_slurm(sweep, timeout_s=wait_timeout_s)
            print_status(sweep)
            if not finished:
                return 124
            return 1 if any(st == "failed" for _, st, _ in status_table(sweep)) else 0
        return 0
    raise OcgInputError("--executor", f"got {executor!r}; expected local or slurm")
