"""The sweep's two job scripts, array.sbatch and analysis.sbatch.

Every value from our own fields (paths, model names, environment values) is quoted for the
shell; the site's `slurm.setup` lines are the one exception: trusted, run as written (they are
the site's `module load`, `conda activate` or `source .../bin/activate`). Resources, partition
and the log file are given per submission on sbatch's command line (manifest.json keeps them).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from ..core.files import atomic_path, follow_umask
from ..core.notebook_names import span
from ..core.paths import FOLDER_VARIABLES, PROJECT_ROOT
from .config import Sweep
from .state import stop_file
from .tasks import INTERRUPTED, task_command


def _exports(sweep: Sweep) -> str:
    """The submitter's OCG_OUTPUTS and OCG_MODEL_CACHE (absolute: `ocg` settles them at start),
    so a job reads the same folders whatever sbatch's --export; then the sweep's `slurm.env`."""
    lines = [
        f"export {name}={shlex.quote(os.environ[name])}"
        for name in FOLDER_VARIABLES
        if name in os.environ
    ]
    lines = lines or ["# OCG_OUTPUTS and OCG_MODEL_CACHE: not set (the defaults)"]
    lines += [
        f"export {name}={shlex.quote(str(value))}" for name, value in sweep.file.slurm.env.items()
    ]
    return "\n".join(lines)


# After the site's lines, ocg's own shell options again: a site's `set -e` (or -E, -C) would end
# the script at the task's exit code (the requeue after a time-limit warning never runs).
OCG_SHELL = "set +eEC; set -uo pipefail  # ocg's shell options, whatever the site's lines set"


def _setup(sweep: Sweep, trap: str = "") -> str:
    lines = sweep.file.slurm.setup
    if not lines:
        return "# site setup: none (slurm.setup in the sweep file)\n" + OCG_SHELL
    return "\n".join(
        [
            "# site setup (slurm.setup in the sweep file: trusted, run as written)",
            *lines,
            "# end of site setup",
            OCG_SHELL,
            *([trap] if trap else []),
        ]
    )


def which_python(sweep: Sweep) -> str:
    """The Python a job runs, in words (the dry run prints it; README, "A first submission")."""
    if not sweep.file.slurm.setup:
        return f"{sys.executable} (the submitter's: no slurm.setup)"
    return (
        f"`python` as slurm.setup leaves it on PATH, when ocg is installed in it; else {sys.executable} "
        "(the submitter's)"
    )


# ocg installed (pip install -e . brings every dependency) and papermill importable: `import ocg`
# alone would pass from the project folder in any Python, and the task would then fail on pandas.
PROBE = "import importlib.metadata as m, papermill, pandas; m.distribution('ocg')"


def _python(sweep: Sweep) -> str:
    """Set PYTHON for the job. With setup lines (`source .../activate`, `conda activate`,
    `module load`), the `python` they put on PATH runs, as a site expects; a setup that only loads
    modules (cuda) leaves a `python` without ocg installed, so then the submitter's
    interpreter runs (by absolute path, valid on a shared filesystem). The task log names it."""
    submitter = shlex.quote(sys.executable)
    if not sweep.file.slurm.setup:
        return f"PYTHON={submitter}  # the submitter's Python (no slurm.setup)"
    return (
        "# the `python` slurm.setup put on PATH, if ocg is installed in it; else the submitter's\n"
        "PYTHON=$(command -v python || true)\n"
        f'if [ -z "$PYTHON" ] || ! "$PYTHON" -c {shlex.quote(PROBE)} 2>/dev/null; then PYTHON={submitter}; fi'
    )


def _write(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    follow_umask(path, executable=True)


# Set before the site's lines (a warning may come while they run), and again after them, in case
# they set a USR1 trap of their own.
WARN_TRAP = """trap 'WARNED=1; [ -z "${OCG_STOP_FILE:-}" ] || touch "$OCG_STOP_FILE"' USR1"""


def write_array_script(sweep: Sweep) -> Path:
    """array.sbatch: one task per model. Slurm's warning signal (USR1, `warn_before_limit_s`
    before the time limit) makes the task stop after the batch in flight; the script then
    requeues the task (Slurm does not requeue a TIMEOUT), and the next start resumes."""
    folder = sweep.folder
    logs = shlex.quote(str(folder.logs))
    models = " ".join(shlex.quote(m) for m in sweep.file.models)
    cmd = '"$PYTHON" ' + shlex.join(task_command(sweep)[1:-1]) + ' "$MODEL"'
    first = sweep.file.models[0]  # every model's stop file, spelled with "$MODEL" for the shell
    stop = (
        f'{shlex.quote(str(folder.status(first).parent))}/"$MODEL"/{stop_file(folder, first).name}'
    )
    script = f"""#!/bin/bash
# ocg sweep {sweep.file.name}: one array task per model (index = position in the sweep's model list).
# Resources and the log file are given per submission on the sbatch command line (see manifest.json).
#SBATCH --job-name=ocg-{sweep.file.name}
#SBATCH --requeue
#SBATCH --open-mode=append
# The time-limit warning (sbatch --signal=B:USR1@N): ask the task to stop after its batch.
WARNED=0
{WARN_TRAP}
{_exports(sweep)}
{_setup(sweep, trap=WARN_TRAP)}
MODELS=({models})
MODEL="${{MODELS[$SLURM_ARRAY_TASK_ID]}}"
LOG={logs}/"$MODEL.log"
STOP={stop}
rm -f "$STOP"
[ "$WARNED" = 0 ] || touch "$STOP"
export OCG_STOP_FILE="$STOP"
cd {shlex.quote(str(PROJECT_ROOT))}
{_python(sweep)}
echo "[$(date -u +%FT%TZ)] task $SLURM_ARRAY_TASK_ID: $MODEL on $(hostname) (job $SLURM_JOB_ID), python $PYTHON" >> "$LOG"
{cmd} >> "$LOG" 2>&1 &
TASK=$!
while :; do
  wait "$TASK"; CODE=$?
  kill -0 "$TASK" 2>/dev/null || break  # a signal ended `wait`, not the task: wait again
done
if [ "$CODE" -gt 128 ]; then wait "$TASK" 2>/dev/null; LAST=$?; [ "$LAST" -eq 127 ] || CODE=$LAST; fi
[ "$WARNED" = 0 ] || echo "[$(date -u +%FT%TZ)] the time-limit warning came (USR1)" >> "$LOG"
rm -f "$OCG_STOP_FILE"
if [ "$CODE" -eq {INTERRUPTED} ]; then
  echo "[$(date -u +%FT%TZ)] requeued ${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}; the next start resumes" >> "$LOG"
  scontrol requeue "${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"
fi
exit "$CODE"
"""
    _write(folder.array_script, script)
    analysis = f"""#!/bin/bash
# ocg sweep {sweep.file.name}: the analyses ({span(sweep.file.analysis) if sweep.file.analysis else "none"}) once over every finished model.
#SBATCH --job-name=ocg-{sweep.file.name}-analysis
#SBATCH --open-mode=append
{_exports(sweep)}
{_setup(sweep)}
cd {shlex.quote(str(PROJECT_ROOT))}
{_python(sweep)}
echo "python $PYTHON"
"$PYTHON" {shlex.join(["-m", "ocg.cli", "sweep", str(sweep.path), "--analysis"])}
"""
    _write(folder.analysis_script, analysis)
    return folder.array_script
