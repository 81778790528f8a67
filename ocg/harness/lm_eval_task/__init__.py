"""lm-evaluation-harness's task folder for Ordered CommonGen (`lm_eval --include_path` this folder,
printed by `ocg lm-eval-path`): ordered_commongen.yaml, and the hooks it names
(lm_eval_hooks.py) that build ocg's instances and call ocg's checks."""

from pathlib import Path

TASK_FOLDER = Path(__file__).parent
TASK_NAME = "ordered_commongen"
