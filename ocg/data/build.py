"""Build the dataset to outputs/: instances.parquet plus manifest.json (written last)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.files import read_json, write_json, write_parquet
from ..core.frames import DEFAULT_N_CONCEPTS
from ..core.layout import Dataset, outputs
from ..core.paths import CONCEPT_SETS_FILE, TEMPLATES_FILE
from ..core.provenance import provenance
from .concepts import load_concept_sets, select_covering_subset
from .instances import COLUMNS, build_instances, content_hash, ids_hash
from .templates import DEFAULT_CONDITIONS, load_templates


def dataset_name(n_concepts: int = DEFAULT_N_CONCEPTS, subset_k: int | None = None) -> str:
    return f"n{n_concepts}" + (f"-k{subset_k}" if subset_k else "")


def _file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class DataInputs:
    """The two files a dataset is built from, as its manifest's `inputs` records them: the
    paper's by default; another pair to build from edited copies."""

    concept_sets: str | Path = CONCEPT_SETS_FILE
    templates: str | Path = TEMPLATES_FILE


def build_dataset(
    *,
    n_concepts: int = DEFAULT_N_CONCEPTS,
    subset_k: int | None = None,
    conditions=DEFAULT_CONDITIONS,
    template_ids: list[int] | None = None,
    out_dir: str | Path | None = None,
    inputs: DataInputs = DataInputs(),
) -> Path:
    """Build and write one dataset; returns its directory. Same inputs, same bytes of ids."""
    conditions = list(conditions)
    concept_sets_file, templates_file = inputs.concept_sets, inputs.templates
    config = load_templates(templates_file)
    sets = load_concept_sets(n_concepts, concept_sets_file)
    if subset_k:
        sets = select_covering_subset(sets, subset_k)
    df = build_instances(sets, config, conditions, template_ids)
    built = (
        Dataset(Path(out_dir)) if out_dir else outputs().dataset(dataset_name(n_concepts, subset_k))
    )
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
        # sha256 of instances.parquet as written: every column, checked on load (content_sha256
        # covers ids and prompts only)
        "instances_sha256": None,
        "inputs": {
            "concept_sets": {
                "file": str(concept_sets_file),
                "sha256": _file_sha256(concept_sets_file),
            },
            "templates": {"file": str(templates_file), "sha256": _file_sha256(templates_file)},
        },
        "provenance": provenance(),
    }
    write_parquet(built.instances, df)
    manifest["instances_sha256"] = _file_sha256(built.instances)
    write_json(built.manifest, manifest)  # last: its presence marks a complete build
    return out


def load_dataset(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """Instances and manifest of a built dataset directory, checked: each row's concepts and
    pos_pattern, then the table against its manifest's hashes (an edited table is refused)."""
    from ..core.errors import OcgInputError

    df, manifest = _read_dataset(path)
    built = Dataset(Path(path))
    check_instances(df, built.instances)
    rebuild = _rebuild_hint(manifest, built.folder)
    for field, now in (
        ("ids_sha256", lambda: ids_hash(df)),
        ("content_sha256", lambda: content_hash(df)),
        ("instances_sha256", lambda: _file_sha256(built.instances)),
    ):
        recorded = manifest.get(field) if isinstance(manifest, dict) else None
        if recorded is None and field == "instances_sha256":
            continue  # built before ocg recorded it
        if recorded != now():
            raise OcgInputError(
                f"{built.instances}: {field}",
                f"the table is not the one {built.manifest.name} "
                f"records (sha256 {str(recorded)[:12]}..., now {now()[:12]}...): it was edited or "
                f"replaced after the build; {rebuild}",
            )
    return df, manifest


def _rebuild_hint(manifest, folder: Path) -> str:
    m = manifest if isinstance(manifest, dict) else {}
    args = [
        f"--n {m.get('n_concepts', DEFAULT_N_CONCEPTS)}",
        *([f"--subset-k {m['subset_k']}"] if m.get("subset_k") else []),
        *([f"--conditions {' '.join(map(str, m['conditions']))}"] if m.get("conditions") else []),
        f"--out {folder}",
    ]
    return f"rebuild it with `ocg build-data {' '.join(args)}` (or notebook 00)"


def check_instances(df: pd.DataFrame, where) -> None:
    """Each row's concepts are a non-empty list of lower-case words and its pos_pattern one N or
    V per concept (what the prompt, the grammar and the matcher read); else an error naming the
    file, the field and the row."""
    from ..core.errors import OcgInputError, shown
    from .concepts import _WORD, POS_TAGS

    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise OcgInputError(
            f"{where}", f"no column(s) {missing}: not an instance table of this ocg"
        )
    for row, (iid, concepts, pos) in enumerate(
        zip(df["instance_id"], df["concepts"], df["pos_pattern"])
    ):
        words = (
            list(concepts)
            if hasattr(concepts, "__len__") and not isinstance(concepts, (str, bytes))
            else None
        )
        if not words or not all(
            isinstance(w, str) and w == w.lower() and _WORD.fullmatch(w) for w in words
        ):
            raise OcgInputError(
                f"{where}: concepts",
                f"row {row} (instance {shown(iid, 80)}): got {shown(concepts, 80)}; "
                "expected a non-empty list of lower-case words",
            )
        if not isinstance(pos, str) or len(pos) != len(words) or set(pos) - set(POS_TAGS):
            raise OcgInputError(
                f"{where}: pos_pattern",
                f"row {row} (instance {shown(iid, 80)}): got {shown(pos, 80)}; "
                f"expected one of {'/'.join(POS_TAGS)} per concept ({len(words)})",
            )


def _read_dataset(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """Instances and manifest of a built dataset directory."""
    from ..core.errors import OcgInputError

    built = Dataset(Path(path))
    if not built.manifest.exists():
        raise OcgInputError(
            str(path),
            "not a built dataset (no manifest.json); build one with "
            "`ocg build-data` or notebook 00",
        )
    try:
        instances = pd.read_parquet(built.instances)
    except (
        OSError,
        ValueError,
    ) as exc:  # pyarrow's ArrowInvalid is a ValueError: empty, cut or no parquet
        size = built.instances.stat().st_size if built.instances.exists() else None
        raise OcgInputError(
            str(built.instances),
            (
                "missing"
                if size is None
                else f"not a readable parquet file ({size:,} bytes: {str(exc)[:200]})"
            )
            + "; rebuild the dataset with `ocg build-data` "
            "or notebook 00",
        ) from None
    return instances, read_json(built.manifest)
