"""The records a checkout of commit c20dad0 wrote (tests/fixtures/c20dad0/), and the type that
reads each: files written before today's code, which it must read and write back as they were."""

from pathlib import Path

from ocg.records import ReportStamp, RunCard, Signature
from ocg.sweep.markers import AnalysisMarker, FailureMarker, InterruptedMarker

C20DAD0 = Path(__file__).parents[1] / "fixtures" / "c20dad0"
RECORDS = {
    "run_card.json": RunCard,
    "signature.json": Signature,
    "report.json": ReportStamp,
    "failed.json": FailureMarker,
    "interrupted.json": InterruptedMarker,
    "analysis.json": AnalysisMarker,
}
VERSIONED = ("run_card.json", "signature.json", "report.json")  # those with a format_version
