"""How each side of `ocg compare` made its answers: model id, revision, dtype, quantisation and
decoding, so a difference is read against what differs besides the model. Read from the run card
beside the generations the side's score set names (its signature's `generations`), else from the
report's results.json (its `models` entry and the run's sampling); what neither holds is null
with the reason."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.files import read_json
from ..core.layout import ModelGenerations, ReportFolder
from ..records import RunCard, Signature

FIELDS = ("model_id", "revision", "dtype", "quantization", "decoding")


@dataclass(frozen=True)
class HowMade:
    """One side's generation settings, each None where no record says it; `source` the record
    read, `missing_reason` why a field is None."""

    model_id: str | None = None
    revision: str | None = None
    dtype: str | None = None
    quantization: str | None = None
    decoding: str | None = None
    source: str | None = None
    missing_reason: str = "no record of how the answers were made was read"

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "missing_reason"}
        missing = {k: self.missing_reason for k in (*FIELDS, "source") if out[k] is None}
        return {**out, "missing_reason": missing} if missing else out


def decoding(samples: int | None, sampling: dict | None, max_new_tokens=None) -> str:
    """'greedy, one answer per prompt' or '4 sampled answers per prompt (temperature 0.7, top_p
    0.95)', with the token budget where it is known."""
    budget = f", at most {max_new_tokens} new tokens" if max_new_tokens else ""
    if not sampling:
        return f"greedy, one answer per prompt{budget}"
    n = samples or sampling.get("samples") or 1
    return (
        f"{n} sampled answer{'s' * (n > 1)} per prompt (temperature "
        f"{sampling.get('temperature')}, top_p {sampling.get('top_p')}){budget}"
    )


def _from_card(card: RunCard, path: Path) -> HowMade:
    st = card.settings
    sampling = card.sampling.to_json() if card.sampling else None
    return HowMade(
        model_id=card.model_id,
        revision=card.revision or st.revision,
        dtype=st.dtype,
        quantization=st.quantization,
        decoding=decoding(
            card.sampling.samples if card.sampling else 1, sampling, st.max_new_tokens
        ),
        source=str(path),
        missing_reason=f"{path} does not record it",
    )


def _from_results(report: Path, model: str) -> HowMade | None:
    path = ReportFolder(report).results
    try:
        doc = read_json(path) if path.is_file() else None
    except (OcgInputError, OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), dict):
        return None
    entry = doc["models"].get(model)
    if not isinstance(entry, dict):
        return None
    run = doc["run"] if isinstance(doc.get("run"), dict) else {}
    return HowMade(
        model_id=entry.get("model_id"),
        revision=entry.get("revision"),
        dtype=entry.get("dtype"),
        quantization=entry.get("quantization"),
        decoding=decoding(run.get("samples"), run.get("sampling")) if run else None,
        source=str(path),
        missing_reason=f"{path} does not record it (no run card was found)",
    )


def how_made(report: Path, model: str, signature: Signature | None) -> HowMade:
    """The side's settings: its run card, else its report's results.json, else nothing (why)."""
    generations = signature.generations if signature else None
    if generations:
        path = ModelGenerations(Path(generations)).run_card
        try:
            if path.is_file():
                return _from_card(RunCard.read(path), path)
        except OcgInputError:
            pass
    found = _from_results(report, model)
    if found is not None:
        return found
    where = f"beside {generations}" if generations else "(the score set names no generations)"
    return HowMade(
        missing_reason=f"no run card {where} and no `models.{model}` in the report's results.json"
    )
