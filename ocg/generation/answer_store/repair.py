"""`ocg repair`: rewrite a model's stores keeping the first record of each id (store.py's
repair_duplicates), and say what repair cannot mend: prompts its records name that the prompt
file lost (a rerun of the same generation puts back each one it renders with that sha256)."""

from __future__ import annotations

import sys
from pathlib import Path

from ...core.errors import OcgInputError
from ...core.layout import ModelGenerations
from ...core.lock import exclusive
from .store import missing_prompts, prompt_file, repair_duplicates


def repair(target: Path) -> int:
    """Repair a generations folder (or one store); 1 when prompts are lost, else 0."""
    files = ModelGenerations(target).stores() if target.is_dir() else [target]
    if not files or not all(f.exists() for f in files):
        raise OcgInputError(str(target), "no generations (*.jsonl) here")
    lost = {}
    with exclusive(target if target.is_dir() else target.parent):
        for f in files:
            report = repair_duplicates(f)
            removed = report["removed"]
            print(
                f"{f}: kept {report['kept']} records, removed {len(removed)}"
                + (
                    f" (original kept as {f.name}.bak): "
                    + "; ".join(f"line {r['line']}: {r['why']}" for r in removed)
                    if removed
                    else ""
                )
            )
            if missing := missing_prompts(f):
                lost[prompt_file(f).path] = len(missing)
    if (
        lost
    ):  # repair cannot write a prompt it does not have; the run that asked them renders them again
        where = "; ".join(
            f"{path}: {n} prompt(s) named by records are missing" for path, n in lost.items()
        )
        print(
            f"ocg: error: {where} (the file was removed or edited): run the same `ocg generate` (or "
            "notebook 01) again; it puts back each prompt it renders with the sha256 its records name",
            file=sys.stderr,
        )
        return 1
    return 0
