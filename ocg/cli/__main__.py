"""`python -m ocg.cli`: the `ocg` command (the console script calls ocg.cli.main too)."""

import sys

from . import main

sys.exit(main())
