"""The records ocg keeps beside its outputs, read and written here alone: a model's run card
(run_card.json, written by generation), a score set's signature (signature.json, by scoring) and
how a report's last run went (report.json, by ocg/jobs/staging.py).

Each is a frozen pydantic model (records/model.py) whose fields are declared once: reading checks
every JSON key against its field's type, and a field typed by a `Vocabulary` holds one of a closed set of words. The JSON
keeps the keys and values it always had, so stored outputs still read; a file from before a key
existed reads with that key's default, and keys this version does not know are kept as read
(`other`). Each file carries `format_version` (inspect_ai's EvalLog does the same): a file without
it is version 1, and a version newer than this ocg's is refused rather than misread.
"""

from .kinds import ReportStamp, ReportStatus, RunCard, RunStatus, Signature
from .model import VERSION_KEY, RecordModel, Vocabulary

__all__ = [
    "VERSION_KEY",
    "RecordModel",
    "ReportStamp",
    "ReportStatus",
    "RunCard",
    "RunStatus",
    "Signature",
    "Vocabulary",
]
