"""`python -m lakehouse.cli`: the command line, as the `lakehouse` script runs it."""

import sys

from lakehouse.cli import main

sys.exit(main())
