"""``python -m pawlette``: the command line, as the ``pawlette`` script runs it."""

import sys

from .cli import main

sys.exit(main())
