"""The records ocg keeps beside its outputs, read and written here alone: a model's run card
(run_card.json, written by generation), a score set's signature (signature.json, by scoring) and
how a report's last run went (report.json, by ocg/jobs/staging.py).

Each is a frozen pydantic model (records/model.py) whose fields are declared once: reading checks
every JSON key against its field's type, and a field typed by a `Vocabulary` holds one of a closed set of words. The JSON
keeps the keys and values it always had, so stored outputs still read; a file from before a key
existed reads with that key's default, and keys this version does not know are kept as read
(`other`). Each file carries `format_version` (inspect_ai's EvalLog does the same): a file without
it is version 1, and a version newer than this ocg's is refused rather than misread.

The run card's blocks (its settings, backend, runs, selections...) are typed too
(records/block.py, records/card.py): each keeps the keys it does not know and is written with
its keys in the order read.
"""

from .block import Block
from .card import (
    BackendBlock,
    BatchCheck,
    ConstrainedBlock,
    ProvenanceBlock,
    RunCard,
    RunEntry,
    RunSettings,
    RunStatus,
    SamplingBlock,
    Selection,
    Tally,
)
from .kinds import ReportStamp, ReportStatus, Signature
from .model import VERSION_KEY, RecordModel, Vocabulary

__all__ = [
    "VERSION_KEY",
    "BackendBlock",
    "BatchCheck",
    "Block",
    "ConstrainedBlock",
    "ProvenanceBlock",
    "RecordModel",
    "ReportStamp",
    "ReportStatus",
    "RunCard",
    "RunEntry",
    "RunSettings",
    "RunStatus",
    "SamplingBlock",
    "Selection",
    "Signature",
    "Tally",
    "Vocabulary",
]
