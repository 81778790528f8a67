"""A developer's command: rewrite docs/DATA.md's frame tables (or those of the file named)."""

import sys
from pathlib import Path

from . import current_text

path = (
    Path(sys.argv[1])
    if len(sys.argv) > 1
    else Path(__file__).resolve().parents[3] / "docs" / "DATA.md"
)
path.write_text(current_text(path.read_text(encoding="utf-8")), encoding="utf-8")
