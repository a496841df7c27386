"""``python -m dpcore``: the command line (:mod:`dpcore.cli`)."""

import sys

from dpcore.cli import main

sys.exit(main())
