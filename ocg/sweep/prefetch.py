"""Hub files a run or sweep needs, fetched once on a node with internet (a login node), so that
compute nodes without it run with the hub offline.

`ocg prefetch FILE` lists, per hub repository (each model entry at the revision it pins, and the
scoring models its metrics load: BLEURT-20, GPT2-XL), the files a load reads, their sizes and
what the cache already holds, then downloads the rest with huggingface_hub (which resumes a
partial file). A task checks the same repositories in the local cache before any work
(`offline_check`): all there, it runs with HF_HUB_OFFLINE=1; some missing on an offline node,
it fails at once, naming them and this command.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from ..config.checked_run import CheckedRun
from ..core.errors import OcgInputError
from ..weights import hub
from ..weights.hub import is_hub_id, pin_note

# What a load reads: configs, tokenizers, code (trust_remote_code) and one weight format.
WANTED = ("*.json", "*.txt", "*.model", "*.tiktoken", "*.py")
SKIPPED_FOLDERS = {"original", "onnx", "openvino", "coreml", "flax", "tf", "gguf"}
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "spiece.model",
    "sentencepiece.model",
    "tokenizer_config.json",
)


def offline() -> bool:
    from ..weights.hub import hub_offline

    return hub_offline()


def hub_repos(run: CheckedRun, models: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(repository, revision, what needs it) for the models (default: all of the file's) and
    the scoring models of its metrics; local folders, embedded and API models need none."""
    repos = []
    for name in models or run.file.models:
        spec = run.entries[name]
        served = spec.api is not None and spec.api.server is not None
        if is_hub_id(spec.id) and (spec.backend == "transformers" or served):
            repos.append((spec.id, spec.revision, f"model {name}"))
    scoring = run.scoring
    metrics = run.file.metrics or scoring.metrics
    if "pbleurt" in metrics and is_hub_id(scoring.bleurt_checkpoint):
        repos.append((scoring.bleurt_checkpoint, "main", "pBLEURT"))
    if (
        "perplexity" in metrics
        and is_hub_id(scoring.perplexity_model)
        and not scoring.perplexity_fallback
    ):
        repos.append(
            (scoring.perplexity_model, "main", "perplexity")
        )  # with a fallback, it may be missing
    seen: dict[tuple[str, str], str] = {}
    for repo, rev, why in repos:
        seen[(repo, rev)] = f"{seen[(repo, rev)]}, {why}" if (repo, rev) in seen else why
    return [(repo, rev, why) for (repo, rev), why in seen.items()]


def select_files(names: list[str]) -> list[str]:
    """The files of a repository a load reads: configs, tokenizer, code, and safetensors weights
    where there are any, else the PyTorch .bin ones (never both, nor original/, onnx/ copies)."""
    names = [n for n in names if not SKIPPED_FOLDERS & set(Path(n).parts[:-1])]
    weights = (
        "*.safetensors" if any(fnmatch.fnmatch(n, "*.safetensors") for n in names) else "*.bin"
    )
    return sorted(n for n in names if any(fnmatch.fnmatch(n, p) for p in (*WANTED, weights)))


def snapshot(repo: str, revision: str) -> Path | None:
    """The cached snapshot folder of repo@revision (a branch name read from refs/), or None."""
    from huggingface_hub.constants import (
        HF_HUB_CACHE,
    )  # HF_HOME, HF_HUB_CACHE as the hub reads them

    folder = Path(HF_HUB_CACHE) / f"models--{repo.replace('/', '--')}"
    ref = folder / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    path = folder / "snapshots" / commit
    return path if path.is_dir() else None


def missing_files(repo: str, revision: str) -> list[str]:
    """What a load of repo@revision would need from the hub that the cache lacks (empty: none):
    its config, a tokenizer, and every weight file (each shard its index names)."""
    snap = snapshot(repo, revision)
    if snap is None:
        return [f"{repo}@{revision} (not in the cache)"]
    missing = [] if (snap / "config.json").exists() else ["config.json"]
    if not any((snap / t).exists() for t in TOKENIZER_FILES):
        missing.append("a tokenizer (tokenizer.json, tokenizer.model, vocab.json ...)")
    for index in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        if (snap / index).exists():
            return missing + [s for s in _shards(snap / index) if not (snap / s).exists()]
    if not any(snap.glob("*.safetensors")) and not any(snap.glob("*.bin")):
        missing.append("weights (*.safetensors or *.bin)")
    return missing


def _shards(index: Path) -> list[str]:
    """The weight files a cached shard index names; a damaged index (0 bytes: a download cut
    short) is an error naming it, as a load would fail on it too."""
    from ..core.files import loads_json

    try:
        weight_map = loads_json(index.read_bytes()).get("weight_map")
    except (ValueError, AttributeError):
        weight_map = None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        size = index.stat().st_size
        raise OcgInputError(
            str(index),
            f"expected a shard index (JSON with a weight_map of file names); it "
            f"is {size} bytes of something else: delete it and run ocg prefetch again",
        )
    return sorted(set(weight_map.values()))


def offline_check(run: CheckedRun, models: list[str], command: str) -> tuple[bool, str | None]:
    """(every hub file is cached, why a task cannot start): a task on a node that cannot reach
    the hub with files missing fails at once, before any model loads."""
    try:
        missing = {
            f"{repo}@{rev} ({why})": files
            for repo, rev, why in hub_repos(run, models)
            if (files := missing_files(repo, rev))
        }
    except OcgInputError as exc:  # a damaged file in the cache: a load would fail on it too
        return False, f"the Hugging Face cache holds a damaged file: {exc}"
    if not missing:
        return True, None
    if hub.hub_reachable():
        return False, None  # downloads on demand, as before
    listed = "; ".join(f"{repo}: {', '.join(files)}" for repo, files in missing.items())
    return False, (
        f"not in the Hugging Face cache and the hub is unreachable: {listed}; fetch them on a "
        f"node with internet (a login node) into the same cache: {command}"
    )


def _size(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def prefetch(path: str | Path, list_only: bool = False) -> int:
    """Plan (repositories, files, sizes, what is cached), print it, then download what is missing."""
    import huggingface_hub.constants

    repos = hub_repos(load_file(path))
    if not repos:
        print(f"{path}: no hub files needed (embedded, local or API models only)")
        return 0
    plans = []
    unlisted: list[str] = []
    reachable = (
        hub.hub_reachable()
    )  # once: offline, each listing would fail alike (a DNS error each)
    unreachable = (
        "HF_HUB_OFFLINE is set: the hub is not asked"
        if offline()
        else f"the hub ({hub.HUB_HOST[0]}) cannot be reached from here"
    )
    if not reachable:
        print(
            f"{unreachable}; what follows is the local cache only (run this on a node with internet to "
            "list and download the rest)",
            flush=True,
        )
    for repo, rev, why in repos:
        plan = _plan(repo, rev, why, reachable, unlisted)
        if plan is not None:
            plans.append(plan)
    listed = (
        f" (of the {len(repos) - len(unlisted)} of {len(repos)} repositories listed)"
        if unlisted
        else ""
    )
    total = sum(need for *_, need in plans)
    print(
        f"in all to download{listed}: {_size(total)} into {huggingface_hub.constants.HF_HUB_CACHE}",
        flush=True,
    )
    if not list_only:
        _download(plans)
    if unlisted:
        why = unreachable if not reachable else "see above; gated ones need HF_TOKEN"
        raise RuntimeError(
            f"{len(unlisted)} of {len(repos)} repositories could not be listed ({why}): "
            f"{', '.join(unlisted)}"
        )
    if not list_only:
        print(
            "done: tasks of this file find every hub file in the cache and run offline", flush=True
        )
    return 0


def _plan(repo: str, rev: str, why: str, reachable: bool, unlisted: list[str]):
    """Print the repository's line; (repo, commit, files to download, their bytes) where the hub
    listed it, else None (cached and offline: nothing to do; or unlisted, added to `unlisted`)."""
    pin = f" [{rev}: {pin_note(rev)}]" if not hub.is_pinned(rev) else ""
    if offline() and not missing_files(repo, rev):  # e.g. on a compute node: is it ready?
        folder = snapshot(repo, rev)
        if folder is None:  # nothing missing: the snapshot is there (missing_files)
            raise AttributeError(f"{repo}@{rev}: no snapshot in the cache")
        files = [f for f in folder.rglob("*") if f.is_file()]
        print(
            f"{repo}@{rev} ({why}): cached, {len(files)} file(s), {_size(sum(f.stat().st_size for f in files))} "
            f"(HF_HUB_OFFLINE: not checked against the hub){pin}",
            flush=True,
        )
        return None
    if not reachable:
        unlisted.append(f"{repo}@{rev}")
        print(
            f"{repo}@{rev} ({why}): not listed; in the local cache: "
            f"{'cached' if not missing_files(repo, rev) else 'NOT cached'}{pin}",
            flush=True,
        )
        return None
    return _listed(repo, rev, why, pin, unlisted)


def _listed(repo: str, rev: str, why: str, pin: str, unlisted: list[str]):
    """The hub's listing of the repository at `rev`: what of it is not yet in the cache."""
    import huggingface_hub as hf

    try:
        info = hf.HfApi().model_info(repo, revision=rev, files_metadata=True)
    except Exception as exc:  # noqa: BLE001 - offline, unknown repo, gated, no network: say which
        cached = "cached" if not missing_files(repo, rev) else "NOT cached"
        unlisted.append(f"{repo}@{rev}")
        print(
            f"{repo}@{rev} ({why}): cannot list it on the hub: {type(exc).__name__}: {str(exc)[:300]} "
            f"(in the local cache: {cached}){pin}",
            flush=True,
        )
        return None
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    files = select_files(list(sizes))
    todo = [
        f
        for f in files
        if not isinstance(hf.try_to_load_from_cache(repo, f, revision=info.sha), str)
    ]
    need = sum(sizes[f] or 0 for f in todo)
    print(
        f"{repo}@{rev} (commit {info.sha}, {why}): {len(files)} file(s), {_size(sum(sizes[f] or 0 for f in files))}; "
        f"to download: {len(todo)} file(s), {_size(need)}{pin}",
        flush=True,
    )
    return repo, info.sha, todo, need


def _download(plans: list[tuple]) -> None:
    import huggingface_hub as hf

    for repo, sha, todo, _ in plans:
        if todo:
            hf.snapshot_download(
                repo, revision=sha, allow_patterns=todo
            )  # resumes .incomplete files


def load_file(path: str | Path) -> CheckedRun:
    """A sweep file (it has `resources` or `slurm`) or a run file."""
    from ..core.files import read_yaml
    from ..jobs.pipeline import load_run
    from .config import load_sweep

    raw = read_yaml(Path(path))
    if not isinstance(raw, dict):
        raise OcgInputError(str(path), "expected a run or sweep file (a mapping of settings)")
    return load_sweep(path) if {"resources", "slurm", "extends"} & set(raw) else load_run(path)
