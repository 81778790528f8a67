"""Build the dataset to outputs/: instances.parquet plus manifest.json (written last)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from ..frames import DEFAULT_N_CONCEPTS
from ..io import read_json, write_json, write_parquet
from ..layout import Dataset, outputs
from ..paths import CONCEPT_SETS_FILE, TEMPLATES_FILE
from ..provenance import provenance
from .concepts import load_concept_sets, select_covering_subset
from .instances import build_instances, content_hash, ids_hash
from .templates import DEFAULT_CONDITIONS, load_templates


def dataset_name(n_concepts: int = DEFAULT_N_CONCEPTS, subset_k: int | None = None) -> str:
    return f"n{n_concepts}" + (f"-k{subset_k}" if subset_k else "")


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build_dataset(n_concepts: int = DEFAULT_N_CONCEPTS, subset_k: int | None = None,
                  conditions=DEFAULT_CONDITIONS, template_ids: list[int] | None = None,
                  out_dir: str | Path | None = None,
                  concept_sets_file: str | Path = CONCEPT_SETS_FILE,
                  templates_file: str | Path = TEMPLATES_FILE) -> Path:
    """Build and write one dataset; returns its directory. Same inputs, same bytes of ids."""
    conditions = list(conditions)
    config = load_templates(templates_file)
    sets = load_concept_sets(n_concepts, concept_sets_file)
    if subset_k:
        sets = select_covering_subset(sets, subset_k)
    df = build_instances(sets, config, conditions, template_ids)
    built = Dataset(Path(out_dir)) if out_dir else outputs().dataset(dataset_name(n_concepts, subset_k))
    out = built.folder
    manifest = {
        "name": out.name,
        "n_concepts": n_concepts,
        "subset_k": subset_k,
        "n_sets": len(sets),
        "set_ids": [s.set_id for s in sets] if subset_k else None,
        "conditions": conditions,
        "template_ids": sorted(set(int(t) for t in df["template_id"])),
        "counts_per_condition": {c: int((df["condition"] == c).sum()) for c in conditions},
        "n_instances": len(df),
        "ids_sha256": ids_hash(df),
        "content_sha256": content_hash(df),
        "inputs": {
            "concept_sets": {"file": str(concept_sets_file), "sha256": _file_sha256(concept_sets_file)},
            "templates": {"file": str(templates_file), "sha256": _file_sha256(templates_file)},
        },
        "provenance": provenance(),
    }
    write_parquet(built.instances, df)
    write_json(built.manifest, manifest)  # last: its presence marks a complete build
    return out


def load_dataset(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """Instances and manifest of a built dataset directory."""
    from ..errors import OcgInputError
    built = Dataset(Path(path))
    if not built.manifest.exists():
        raise OcgInputError(str(path), "not a built dataset (no manifest.json); build one with "
                                       "`ocg build-data` or notebook 00")
    try:
        instances = pd.read_parquet(built.instances)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError: empty, cut or no parquet
        size = built.instances.stat().st_size if built.instances.exists() else None
        raise OcgInputError(str(built.instances), ("missing" if size is None else f"not a readable parquet file "
                            f"({size:,} bytes: {str(exc)[:200]})") + "; rebuild the dataset with `ocg build-data` "
                            "or notebook 00") from None
    return instances, read_json(built.manifest)
