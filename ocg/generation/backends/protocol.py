"""The contract every backend keeps (transformers, openai, replay): what generation runs, the
batch-invariance check and the run card read of one, and nothing else. A backend is built complete
by its constructor, `(spec, batch, *, sampling, grammars, prompts, instances)`: no caller sets
its attributes afterwards (the batch size is resolved once before: batch_auto.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from ...config.models_file import ModelEntry
from ...records import BackendBlock


class Backend(Protocol):
    """A model entry's backend: renders prompts (a string for transformers, chat messages for
    the others), answers one planned batch, and describes itself for the run card."""

    kind: ClassVar[str]
    applies_grammars: ClassVar[bool]

    # read-only to its users (properties here: the classes hold them as plain attributes)
    @property
    def spec(self) -> ModelEntry: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def sampling(self) -> dict | None: ...

    @property
    def grammars(self) -> Mapping[str, str]: ...

    @property
    def system_mode(self) -> str: ...

    def render(self, messages: list[dict]) -> Any: ...

    def prompt_lengths(self, rendered: list[Any]) -> list[int]: ...

    def prompt_settings(self) -> dict: ...

    def generate(
        self, rendered: list[Any], instance_ids: list[str] | None = None, sample: int = 0
    ) -> list[dict]: ...

    def resolved_revision(self) -> str | None: ...

    def card(self) -> BackendBlock: ...
