"""``python -m dpcore.cli``: the command line (:func:`dpcore.cli.main`)."""

import sys

from dpcore.cli import main

sys.exit(main())
