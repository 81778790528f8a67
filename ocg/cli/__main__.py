"""`python -m ocg.cli`: the `ocg` command (the console script calls ocg.cli.main too)."""

import sys

try:
    from . import main
except KeyboardInterrupt:  # Ctrl-C while the package imports: one line, as main() says
    print("ocg: error: interrupted (Ctrl-C) while starting; nothing was done", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
