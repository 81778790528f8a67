"""A report's own score sets: linked into the report when its scoring ends, so that every
analysis, results.json and the landing page read the sets this run scored, whatever another run
rescores in the same outputs folder meanwhile (two reports with other scoring settings).

Score tables and signatures are only ever replaced whole (an atomic rename, ocg/core/files.py), never
written in place, so a hard link keeps the bytes it was made from: no copy, and no lock that one
report would hold against another. Each pinned set is checked complete (its signature's checksums)
and scored as the run asks (its scoring settings and metrics); otherwise the report stops, saying
which setting differs.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from ..config.scoring_file import ScoringFile
from ..core.errors import OcgInputError
from ..core.layout import SCORE_TABLES, ModelScores
from ..core.lock import holder
from ..records import Signature
from .scoreset import unfinished_reason

# Settings the values do not depend on (params/scoring.yaml says so): only the time does.
SPEED_ONLY = ("spacy_batch_size", "spacy_processes")


def _link(source: Path, target: Path) -> None:
    """`target` holds `source`'s bytes now: a hard link, or a copy where the file system has none."""
    try:
        os.link(source, target)
    except FileNotFoundError:
        return  # absent from the set: it reads as unfinished, as it would have
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copyfile(source, target)


def scoring_differences(
    signature: Signature, asked: ScoringFile, metrics: list[str] | None
) -> list[str]:
    """How a score set's signature differs from what a run asks (`asked`: its scoring settings,
    params/scoring.yaml under its `scoring:` overrides; and its metrics): one phrase per setting."""
    wanted = list(metrics or asked.metrics)
    out = (
        []
        if set(signature.metrics) == set(wanted)
        else [f"metrics {signature.metrics} (this run: {wanted})"]
    )
    if signature.config is None:  # written before signatures recorded the settings: the keys decide
        return out
    for key, value in asked.recorded().items():
        if key not in SPEED_ONLY and key != "metrics" and signature.config.get(key) != value:
            out.append(f"{key}={signature.config.get(key)!r} (this run: {value!r})")
    return out


def pin_scores(
    scores_root: Path,
    models: list[str],
    pinned_root: Path,
    asked: ScoringFile,
    metrics: list[str] | None,
) -> None:
    """Link each model's score set under `pinned_root`, as it is now; a set scored otherwise than
    the run asks is refused. A model without scores, or with an unfinished set, is pinned as
    found (the analyses and the landing page say what is missing)."""
    for model in models:
        source, pinned = ModelScores.of(model, scores_root), ModelScores.of(model, pinned_root)
        if not source.folder.is_dir():
            continue
        pinned.folder.mkdir(parents=True, exist_ok=True)
        for path in [*(source.table(name) for name in SCORE_TABLES), source.signature]:
            _link(path, pinned.folder / path.name)
        if unfinished_reason(pinned.folder) is not None:
            if (who := holder(source.folder)) is not None:
                raise OcgInputError(
                    str(source.folder),
                    f"{who} is rescoring it while this report takes its "
                    "scores; run the report again when it is done, or give each run its own "
                    "`outputs:` folder",
                )
            continue
        differ = scoring_differences(Signature.read(pinned.signature), asked, metrics)
        if differ:
            raise OcgInputError(
                str(source.folder),
                "scored otherwise than this run asks: "
                + "; ".join(differ)
                + " (another run or `ocg score` rescored it after this run's 02_score?); "
                "rescore it as this run asks (02_score in its `notebooks:`) and run the report "
                "again, or give each run its own `outputs:` folder",
            )
