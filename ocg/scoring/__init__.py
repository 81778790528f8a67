"""Scoring: every metric of the paper for each model's generations (docs/METHODS.md, "Metrics").

config.py    the scoring settings (params/scoring.yaml), checked
dictionary.py  score tables checked on read against docs/DATA.md
families.py  each scoring family once: its columns, its key (for staleness), its computation, its code version
neural.py    perplexity and pairwise BLEURT with per-text caches
samples.py   tables over repeated samples: groups per sample, the summary's mean and spread over samples
family.py    what a family is: its context, key, signature block and code digest
run.py       score one model (recomputing only stale families), every model
tables.py    the answers and groups tables with each family's columns (computed or kept)
summary.py   the summary table: the paper's metrics per (model, condition, template)
scoreset.py  a model's tables and signature.json: written signature-last, complete or unfinished
pinned.py    a report's own score sets, linked when its scoring ends and checked against its settings
"""

from .families import FAMILIES, cpu_families
from .run import score_all, score_model, scoring_request, stale_metrics
from .settings import CONFIG_KEYS, SCORING_FILE, check_metrics, load_scoring_config
from .summary import summarise

__all__ = [
    "CONFIG_KEYS",
    "FAMILIES",
    "SCORING_FILE",
    "check_metrics",
    "cpu_families",
    "load_scoring_config",
    "score_all",
    "score_model",
    "scoring_request",
    "stale_metrics",
    "summarise",
]
