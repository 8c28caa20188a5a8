"""``python -m wikisuggest``: the command line (see :mod:`wikisuggest.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
