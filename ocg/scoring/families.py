"""Every scoring family, by name: the paper's (paper_families.py) then those of the sentence's
quality (quality_families.py). What a family is (Context, Family, code_digest): family.py.

As sacreBLEU builds its signature from the metric object's own attributes, one settings record
per family feeds both its key (`Family.key`: the generations' hash, the version and the
settings; what staleness compares, `metric_keys` in signature.json) and its block there
(`Family.block`: the key verbatim, then what `compute` measured or chose while computing).

Each family declares its `version` and the `code` that computes it (modules and functions). The
version is part of the family's key, so a new version makes stored values stale and keeps models
scored by different code out of one table. A change to that code must bump the version:
tests/scoring/test_family_versions.py compares `code_digest` with a recorded one.

Adding a metric: one Family in quality_families.py (or a module beside it), its `reported`
declared inline, added here (docs/developing.md, "Adding a metric"); the paper's six families
declare theirs in ocg/metrics/registry.py, below scoring, where metrics/statistics.py reads them.
"""

from __future__ import annotations

from .family import Family
from .paper_families import PAPER_FAMILIES
from .quality_families import QUALITY_FAMILIES

FAMILIES: dict[str, Family] = {**PAPER_FAMILIES, **{f.name: f for f in QUALITY_FAMILIES}}


def cpu_families() -> list[str]:
    """The scoring families that run no neural model, in the order they run."""
    return [name for name, f in FAMILIES.items() if not f.neural]
