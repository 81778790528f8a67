"""The layout of outputs: one object per folder, answering "where is X of model M, sweep S or report R".

Every module that reads or writes outputs asks these objects; no other module spells a file
name of this layout. The roots come from ocg/core/paths.py at call time (OCG_OUTPUTS and
OCG_MODEL_CACHE move them), so a test or a notebook kernel that sets them is followed.

  outputs/ (OCG_OUTPUTS)   Outputs
    data/<dataset>/          Dataset: instances.parquet + manifest.json (notebook 00)
    generations/<model>/     ModelGenerations: <condition>.jsonl (+ .prompts.jsonl.gz) + run_card.json (01)
    scores/<model>/          ModelScores: answers, groups, summary parquet + signature.json (02)
    reports/<run>/           ReportFolder: ExecutedNotebooks (copy and HTML), tables/, figures/,
                             index.html, cases.html (+ cases/), report.json, results.json,
                             scores/<model>/ (the score sets it read, hard links)
    notebooks/               notebooks executed one by one (`ocg run-notebook`)
    comparisons/<A>~<model A>~vs~<B>~<model B>/  one model against another (`ocg compare`): index.html, comparison.json
    models/                  converted embedded models: ConvertedModel, the packaged embedding
                             model: PackagedModel (the checkout's outputs/models whatever OCG_OUTPUTS
                             says; OCG_MODEL_CACHE moves it; a wheel: ~/.cache/ocg/models)
  <a sweep's outputs>/       SweepFolder: the same generations/, scores/, reports/<sweep name>/,
                             plus notebooks/<model>/, status/, logs/, slurm/
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .paths import model_cache_dir, outputs_dir

SCORE_TABLES = ("answers", "groups", "summary")


def _inside(*parts: str, doc: str | None = None) -> property:
    """A read-only attribute: the path `parts` inside the object's own folder (`folder`, or `root`)."""

    def path(self) -> Path:
        return Path(getattr(self, "folder", None) or self.root, *parts)

    return property(path, doc=doc)


@dataclass(frozen=True)
class Dataset:
    """A built dataset (notebook 00): its manifest is written last and marks a complete build."""

    folder: Path
    instances = _inside("instances.parquet")
    manifest = _inside("manifest.json")


@dataclass(frozen=True)
class ModelGenerations:
    """One model's generations folder: a JSONL store per condition and the run card."""

    folder: Path
    run_card = _inside("run_card.json")
    server_log = _inside("server.log", doc="What a server started for the run printed.")

    @classmethod
    def of(cls, model: str, root: str | Path | None = None) -> ModelGenerations:
        """`model`'s folder under a generations root (default: outputs/generations)."""
        return cls(Path(root or outputs().generations) / model)

    @property
    def model(self) -> str:
        return self.folder.name

    def store(
        self, condition: str, prompts: bool = False
    ) -> Path:  # prompts: its prompt file (docs/DATA.md)
        return self.folder / (f"{condition}.prompts.jsonl.gz" if prompts else f"{condition}.jsonl")

    def stores(self) -> list[Path]:
        """Every condition's store present, in name order."""
        return sorted(self.folder.glob(self.store("*").name))


@dataclass(frozen=True)
class ModelScores:
    """One model's score set: three tables and the signature. (The neural families' caches beside
    them are named in ocg/scoring/families.py: inside code whose digest is each family's version.)"""

    folder: Path
    answers = _inside("answers.parquet")
    groups = _inside("groups.parquet")
    summary = _inside("summary.parquet")
    signature = _inside("signature.json")
    judge_server_log = _inside("judge_server.log", doc="What the judge's server printed.")
    judge_secret = _inside(
        "judge_secret",
        doc="The key of the judge's nonces and cache digests (ocg/scoring/judging.py); not shown.",
    )

    @classmethod
    def of(cls, model: str, root: str | Path | None = None) -> ModelScores:
        """`model`'s folder under a scores root (default: outputs/scores)."""
        return cls(Path(root or outputs().scores) / model)

    def table(self, name: str) -> Path:
        """answers, groups or summary."""
        return self.folder / f"{name}.parquet"


@dataclass(frozen=True)
class ComparisonFolder:
    """One model against another (`ocg compare`): its page and its data."""

    folder: Path
    index = _inside("index.html")
    data = _inside("comparison.json")

    @classmethod
    def of(
        cls, root: Path, report_a: str, model_a: str, report_b: str, model_b: str
    ) -> ComparisonFolder:
        """`<report A>~<model A>~vs~<report B>~<model B>`: named by both reports and both models,
        so no other pair lands here ('~' is in no run or model name, so the name splits one way);
        a name too long for the file system keeps a prefix and a digest of the whole."""
        name = f"{report_a}~{model_a}~vs~{report_b}~{model_b}"
        if len(name.encode()) > 255:
            import hashlib

            digest = hashlib.sha256(name.encode()).hexdigest()[:16]
            name = name.encode()[:200].decode(errors="ignore") + "~" + digest
        return cls(Path(root) / name)


@dataclass(frozen=True)
class ReportFolder:
    """A report: executed notebooks, tables/, figures/, the landing page and the case browser."""

    folder: Path
    tables = _inside("tables")
    figures = _inside("figures")
    index = _inside("index.html")
    methods = _inside(
        "methods.html", doc="docs/METHODS.md rendered into the report (its links work anywhere)"
    )
    cases = _inside("cases.html", doc="The case browser's page; its data lie in `case_chunks`.")
    case_chunks = _inside("cases")
    state = _inside(
        "report.json", doc="report.json: building, done or failed (ocg/jobs/staging.py)."
    )
    results = _inside(
        "results.json",
        doc="Every Table 1 number with its interval, machine-readable (docs/DATA.md).",
    )
    scores = _inside(
        "scores", doc="The score sets its numbers come from, <model>/ each (ocg/scoring/pinned.py)."
    )
    verify = _inside(
        "verify.json", doc="What `ocg verify` found when the report was built (site/verify.py)."
    )

    @classmethod
    def at(cls, folder: str | Path | None = None) -> ReportFolder:
        """`folder`, or outputs/reports itself (a run by hand saves nothing: analysis/report.py)."""
        return cls(Path(folder) if folder else outputs().reports)

    def table_provenance(self, name: str) -> Path:
        """What produced a saved table (its `provenance.json` beside it)."""
        return self.table(name, "provenance.json")

    def table(self, name: str, ext: str = "csv") -> Path:
        return self.tables / f"{name}.{ext}"

    def figure(self, name: str, ext: str = "png") -> Path:
        return self.figures / f"{name}.{ext}"

    @property
    def staging(self) -> ReportFolder:
        """Where this report is built ('~' is never in a run name, so no report is called this)."""
        return ReportFolder(self.folder.with_name(self.folder.name + ".building~"))

    @property
    def previous(self) -> Path:
        """The replaced report, for the instant between the two renames that swap a new one in."""
        return self.folder.with_name(self.folder.name + ".old~")

    @property
    def failed(self) -> Path:
        """A stopped or failed rebuild of a finished report, kept beside it (the finished report
        stays in place; the next finished run removes this)."""
        return self.folder.with_name(self.folder.name + ".failed~")


@dataclass(frozen=True)
class ExecutedNotebook:
    """A notebook executed into a folder (a report, outputs/notebooks, a sweep model's): copy and HTML."""

    folder: Path
    name: str

    @property
    def copy(self) -> Path:
        return self.folder / f"{self.name}.ipynb"

    @property
    def page(self) -> Path:  # the whole notebook, code included
        return self.folder / f"{self.name}.html"

    @property
    def results_page(self) -> Path:  # the same without its code, for readers
        return self.folder / f"{self.name}.results.html"

    @property
    def request(self) -> Path:  # the request it was given (ocg/config/requests.py), as JSON
        return self.folder / "requests" / f"{self.name}.json"


@dataclass(frozen=True)
class Outputs:
    """A root holding generations/, scores/, reports/ and the rest (outputs/, or a sweep's)."""

    root: Path
    data = _inside("data")
    generations = _inside("generations")
    scores = _inside("scores")
    reports = _inside("reports")
    notebooks = _inside("notebooks", doc="Executed copies of notebooks run one by one.")
    comparisons = _inside(
        "comparisons", doc="`ocg compare`'s pages, <A>~<model A>~vs~<B>~<model B>/ each."
    )

    def dataset(self, name: str) -> Dataset:
        return Dataset(self.data / name)

    def model_generations(self, model: str) -> ModelGenerations:
        return ModelGenerations.of(model, self.generations)

    def model_scores(self, model: str) -> ModelScores:
        return ModelScores.of(model, self.scores)

    def report(self, name: str) -> ReportFolder:
        return ReportFolder(self.reports / name)


@dataclass(frozen=True)
class SweepFolder:
    """A sweep's outputs folder; status/ is per sweep name, so sweeps can share generations."""

    root: Path
    name: str
    logs = _inside("logs")
    analysis_log = _inside("logs", "analysis.log")
    slurm = _inside("slurm")
    array_script = _inside("slurm", "array.sbatch")
    analysis_script = _inside("slurm", "analysis.sbatch")
    manifest = _inside("slurm", "manifest.json", doc="What was submitted to Slurm, and when.")
    dry_run_manifest = _inside("slurm", "manifest.dry-run.json", doc="What --dry-run would submit.")

    @property
    def outputs(self) -> Outputs:
        return Outputs(self.root)

    @property
    def report(self) -> ReportFolder:
        return self.outputs.report(self.name)

    def notebooks(self, model: str) -> Path:
        """The executed notebooks of one model's task."""
        return self.outputs.notebooks / model

    def status(self, model: str) -> Path:
        """A model's completion markers: <notebook>.done, or failed.json."""
        return self.root / "status" / self.name / model

    def done_marker(self, model: str, notebook: str) -> Path:
        return self.status(model) / f"{notebook}.done"

    def failure(self, model: str) -> Path:
        return self.status(model) / "failed.json"

    def stop_request(self, model: str) -> Path:
        """Made by the job script on Slurm's warning signal; the task stops after the batch in flight."""
        return self.status(model) / "stop-requested"

    def interrupted(self, model: str) -> Path:
        """Written by a task that stopped at Slurm's time-limit warning (it requeues itself)."""
        return self.status(model) / "interrupted.json"

    @property
    def analysis_marker(self) -> Path:
        return self.root / "status" / self.name / "analysis.json"

    def log(self, model: str) -> Path:
        return self.logs / f"{model}.log"


@dataclass(frozen=True)
class ConvertedModel:
    """A converted embedded model: <name>/ by transformers 4.x, <name>.transformers5/ by 5.x (4.x misreads 5.x's)."""

    folder: Path
    source = _inside(
        "ocg_source.json",
        doc="Where it was converted from, with each file's size and sha256; written last, it "
        "marks a complete conversion.",
    )
    weights_stat = _inside(
        ".ocg_weights_stat.json",
        doc="Each weights file's size and mtime at conversion: while both hold, its sha256 is "
        "not computed again. Hidden, so not in the folder's digest (a conversion's record is "
        "then the same on every machine).",
    )

    @classmethod
    def named(cls, name: str, transformers_major: int = 4) -> ConvertedModel:
        return cls(
            model_cache_dir()
            / (name if transformers_major == 4 else f"{name}.transformers{transformers_major}")
        )


@dataclass(frozen=True)
class PackagedModel:
    """A model extracted from a package's archive (the default embedding model: ocg/weights/packaged.py)."""

    folder: Path
    source = _inside(
        "ocg_source.json",
        doc="Where it was extracted from, with the weights' sha256; written last, it marks a complete extraction.",
    )

    @classmethod
    def named(cls, name: str) -> PackagedModel:
        return cls(model_cache_dir() / name)


def outputs() -> Outputs:
    """The outputs root as the environment says now (OCG_OUTPUTS), not at import."""
    return Outputs(outputs_dir())
