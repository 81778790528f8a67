"""What the notebook and browser tests share: the small scored run's concept sets and model
names (its fixture, `scored`, is in tests/analysis/conftest.py), and what an executed notebook
printed."""

import nbformat

SETS = {
    "s2n2v": [("dog", "N"), ("catch", "V"), ("frisbee", "N"), ("throw", "V")],
    "s3n1v": [("boy", "N"), ("ride", "V"), ("bike", "N"), ("street", "N")],
}
# Names of a sweep's own models file; the second is the paper's Qwen2.5-7B: the join must find it.
MODELS = ["smollm2-135m-instruct", "my-qwen"]


def output_text(executed) -> str:
    """What the cells printed or displayed (not their source, not the injected parameters)."""
    nb = nbformat.read(executed, as_version=4)
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            for kind in ("text/plain", "text/html", "text/markdown"):
                parts.append(str(out.get("data", {}).get(kind, "")))
    return "\n".join(parts)
