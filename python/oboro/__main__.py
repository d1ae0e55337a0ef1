"""`python -m oboro ...` is the same as the `oboro` command."""

import sys

from .cli import main

sys.exit(main())
