"""The landing page's header names a run file of the checkout as the project does, without the
machine's folders (a page or its screenshot is shared), and any other file in full."""

from pathlib import Path

from ocg.core.paths import PROJECT_ROOT
from ocg.site.landing import _shown


def test_a_shipped_run_file_is_named_from_the_checkout_and_another_in_full(tmp_path):
    assert _shown(PROJECT_ROOT / "params" / "runs" / "demo.yaml") == "params/runs/demo.yaml"
    assert _shown(tmp_path / "run.yaml") == str(tmp_path / "run.yaml")
    assert _shown(Path("/") / "elsewhere" / "demo.yaml") == "/elsewhere/demo.yaml"
