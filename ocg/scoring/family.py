"""What a scoring family is (ocg/scoring/families.py declares them): the Context its computation
reads, the Family record (columns, settings, compute, version, code, what it reports), its key and
its block in signature.json, and `code_digest`, the hash of its code that its version answers for
(tests/scoring/test_family_versions.py)."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from ..config.scoring_file import ScoringFile
from ..metrics import registry
from ..metrics.registry import MetricFamily


@dataclass
class Context:
    """What a family's computation may read."""

    answers: pd.DataFrame  # one row per answer: ids, concepts, pos_pattern, answer, flags
    texts: pd.Series  # the answer as text ("" for a failed extraction)
    group_texts: list[list[str]]  # per group (model, condition, template, set): its answers
    config: ScoringFile  # the scoring settings (params/scoring.yaml, the run's overrides)
    resolved: dict  # models actually used (spaCy pipeline, perplexity model)
    keys: dict  # each family's key (what its values depend on)
    out: Path  # the model's scores folder (caches live there)
    redo: bool
    log: Callable[[str], None]


@dataclass(frozen=True)
class Family:
    reported: (
        MetricFamily  # its name, level, summed columns and reported metrics (declared on creation)
    )
    columns: tuple[str, ...]
    settings: Callable[[ScoringFile, dict], dict]  # (config, resolved) -> what the values depend on
    compute: Callable[
        [Context], tuple[pd.DataFrame | dict, dict]
    ]  # -> columns, what it measured or chose
    version: int  # bump whenever `code` changes what it computes
    code: tuple  # the modules and functions that compute the values (hashed by code_digest)
    # Optional: starts the computation in other processes and returns a handle whose
    # `result()` gives what `compute` would, so scoring goes on with other families meanwhile.
    start: Callable[[Context], Any] | None = None
    neural: bool = (
        False  # runs a neural model (slow on a CPU, a checkpoint to fetch): perplexity, pBLEURT
    )

    def __post_init__(self):
        missing = [c for c in self.reported.sums if c not in self.columns]
        if missing:
            raise ValueError(
                f"scoring family {self.name}: sums {missing} are not among its columns"
            )
        registry.declare(self.reported)

    @property
    def name(self) -> str:
        return self.reported.name

    @property
    def level(self) -> str:  # "answers" or "groups": the table its columns go to
        return self.reported.level

    def key(self, config: ScoringFile, resolved: dict, inputs_sha256: str) -> dict:
        """Everything the values depend on; a change means they must be recomputed."""
        return {
            "inputs_sha256": inputs_sha256,
            "version": self.version,
            **self.settings(config, resolved),
        }

    @staticmethod
    def block(key: dict, record: dict) -> dict:
        """The family's block in signature.json: its key verbatim (its settings in the same words),
        then what its computation measured or chose (`record`: e.g. the revision a neural model
        loaded; a block stored before the key was in it gets it added: a reused family's key is
        the one just checked)."""
        return {"key": key, **{k: v for k, v in record.items() if k != "key"}}


def _syntax(obj) -> str:
    """A module or function as normalised source: its syntax tree without comments, docstrings or
    the paths of ocg's own imports (what is imported stays), so moving a module changes nothing."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            cast(Any, node).body = body[1:] or [ast.Pass()]  # a node with a body list
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").split(".")[0] == "ocg"
        ):
            node.module, node.level = "ocg", 0
    return ast.unparse(tree)


def code_digest(family: Family) -> str:
    """sha256 of the family's code as syntax trees, each function named by its qualified name in
    its module: a comment, docstring, layout edit or a module's move keeps it."""
    h = hashlib.sha256()
    for obj in family.code:
        name = "module" if inspect.ismodule(obj) else obj.__qualname__
        h.update(f"{name}\n".encode())
        h.update(_syntax(obj).encode())
    return h.hexdigest()
