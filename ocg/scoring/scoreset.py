"""A score set: one model's answers, groups and summary tables and their signature.json.

The signature is written last and records the size and sha256 of each table written with it:
it is the set's completeness marker. A set is complete when its signature exists and every
table matches it; anything else (no signature, a table that a killed rescoring replaced, a
table missing) is unfinished: `ocg score` recomputes it in full and `load_scores` refuses it,
naming the folder.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pandas as pd

from ..core.errors import OcgInputError
from ..core.files import loads_json, refuse_link, write_parquet
from ..core.layout import SCORE_TABLES, ModelScores
from ..records import Signature
from .dictionary import check_table


def _digest(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_score_set(folder: Path, tables: dict[str, pd.DataFrame], signature: Signature) -> None:
    """The tables, then the signature naming their checksums (so a kill between leaves the set
    recognisably unfinished). The folder is checked again here: scoring takes minutes after
    score_model's check, and a link put in its place meanwhile is not written through."""
    refuse_link(folder)
    files, where = {}, ModelScores(folder)
    for name in SCORE_TABLES:
        path = write_parquet(where.table(name), tables[name])
        files[path.name] = _digest(path.read_bytes())
    signature.replace(files=files).write(where.signature)


def holds_scores(folder: Path) -> bool:
    """The folder holds a score set, complete or not (a lone writer's lock is not one)."""
    return folder.is_dir() and any(p.name != ".lock" for p in folder.iterdir())


def _read(folder: Path, wanted: tuple[str, ...]) -> tuple[Signature | None, dict, str | None]:
    """(signature, the wanted tables, why the set is unfinished or None)."""
    where = ModelScores(folder)
    sig_name = where.signature.name
    try:
        signature = Signature.from_json(loads_json(where.signature.read_bytes()), sig_name)
    except FileNotFoundError:
        return None, {}, f"no {sig_name} (a scoring started here and did not finish)"
    except OcgInputError as exc:  # a ValueError too: first
        return None, {}, str(exc)
    except ValueError:
        return None, {}, f"{sig_name} is not valid JSON"
    files = signature.files
    if files is None:
        return None, {}, f"{sig_name} records no table checksums (written before ocg checked them)"
    frames = {}
    for name in SCORE_TABLES:
        path = where.table(name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None, {}, f"{path.name} is missing"
        if _digest(data) != files.get(path.name):
            return None, {}, f"{path.name} does not match {sig_name} (a scoring was interrupted)"
        if name in wanted:
            frames[name] = pd.read_parquet(io.BytesIO(data))
    return signature, frames, None


def unfinished_reason(folder: Path) -> str | None:
    """None for a complete score set, else why it is not one."""
    return _read(folder, ())[2]


def read_score_set(
    folder: Path, tables: tuple[str, ...] = SCORE_TABLES
) -> tuple[Signature, dict[str, pd.DataFrame]]:
    """The signature and the wanted tables of a complete score set, each table checked against
    the signature from the very bytes parsed and against docs/DATA.md (ocg/scoring/dictionary.py);
    an unfinished set is an error naming the folder."""
    signature, frames, problem = _read(folder, tables)
    if problem:
        raise OcgInputError(
            str(folder),
            f"unfinished score set: {problem}; run `ocg score` (or notebook "
            "02_score) again to recompute it",
        )
    assert signature is not None  # a set without a problem has its signature
    families = {m for m in signature.metrics if signature.status(m) == "ok"}
    for (
        name,
        frame,
    ) in frames.items():  # resealed by hand is sealed, not right: docs/DATA.md says what is
        check_table(ModelScores(folder).table(name), name, frame, Path(folder).name, families)
    return signature, frames
