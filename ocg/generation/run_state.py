"""One generation run's state, threaded through its steps (ocg/generation/run_generation.py, answering.py):
the model and its backend, the stores and rows per condition, the rendered prompts, the settings,
and the run card, which changes only through `save` and is written once per change."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config.models_file import ModelEntry
from ..core.files import write_json_when_full
from ..records import RunCard, RunEntry, RunSettings
from .answer_store.store import GenerationStore
from .backends.protocol import Backend


@dataclass
class RunState:
    """What every step of a run reads. A step changes `card` only by `save` (a new card, then
    written), never in place: a card once written stays as it was written."""

    spec: ModelEntry
    backend: Backend
    stores: dict[str, GenerationStore]
    rows: dict[str, pd.DataFrame]  # the instances asked, per condition
    rendered: dict[str, object]  # instance id: its prompt as the backend takes it
    hashes: dict[str, str]  # instance id: the sha256 of its rendered prompt
    settings: RunSettings  # the card's settings (resolved_revision filled in once weights load)
    card_path: Path
    card: RunCard  # built once the checks pass (run_generation.py); then changed only by `save`
    samples: int = 1
    progress: bool = True

    @property
    def model_dir(self) -> Path:
        return self.card_path.parent

    def save(self, card: RunCard, when_full: bool = False) -> None:
        """`card` (a changed copy of `card`: its `replace`) as the run's card, written
        (`when_full`: even on a full disk, for a failed run)."""
        self.card = card
        if when_full:
            write_json_when_full(self.card_path, self.card.to_json())
        else:
            self.card.write(self.card_path)

    def with_run(self, entry: dict) -> RunCard:
        """The card with this run's entry (the last of `runs`) as `entry` stands now: a copy, so
        the entry the caller keeps filling in never changes a card already written."""
        return self.card.replace(runs=[*self.card.runs[:-1], RunEntry.model_validate(entry)])

    def resolved(self, revision: str | None) -> None:
        """The revision the loaded weights resolved to, in the card's settings (written now, not
        left for the run's last write)."""
        if revision != self.settings.resolved_revision:
            self.settings = self.settings.replace(resolved_revision=revision)
            self.save(self.card.replace(settings=self.settings))


def answers_to_do(
    stores: dict[str, GenerationStore], rows: dict[str, pd.DataFrame], samples: int
) -> int:
    """Answers asked and not on disk: (instance, sample) pairs."""
    return sum(
        int((~rows[c]["instance_id"].map(lambda i, s=s, st=st: (i, s) in st.done)).sum())
        for c, st in stores.items()
        for s in range(samples)
    )
