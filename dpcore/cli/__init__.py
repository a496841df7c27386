"""The ``dpcore`` command line.

::

    dpcore list                                   # mechanisms and their parameters
    dpcore run dplloyd data.csv --radius 10 --epsilon 1 -p n_clusters=5 --out result.json
    dpcore run --config run.json --out result.csv # the JSON the dashboard downloads
    dpcore run dplloyd parts/ --radius 10 --epsilon 3 -k 25 --sampler coreset \
        --sample-size 50000 --n-rows 10000000 --stat-epsilon 0.3 --dask tcp://host:8786
    dpcore sample parts/ --radius 10 --sample-size 50000 --out sample.parquet   # Dask
    dpcore reproduce importance --quick           # or: dpcore reproduce all
    dpcore app --port 8501                        # the Streamlit dashboard (--host 127.0.0.1)
    dpcore app --private data.csv --schema schema.json --budget 2,1e-6 --dataset cities
    dpcore run dplloyd data.csv --schema schema.json --budget 2,1e-6 -k 5 --epsilon 0.5
    dpcore ledger show|export|reset [--ledger-dir D] [--key KEY | --dataset NAME]
    dpcore ledger describe|grant|revoke|analysts|history|verify ...     # curator actions

Results (released values and the guarantee) go to ``--out`` as JSON or CSV, a short summary to
stdout, progress and warnings to stderr. Bad input ends with exit status 2 and a one-line
message (no traceback).

The commands live in :mod:`.run` (``run``, ``list``), :mod:`.sample` (``sample`` and
``run --dask``), :mod:`.reproduce`, :mod:`.dashboard` (``app``) and :mod:`.ledger`; the parser in
:mod:`.parser`, shared helpers in :mod:`.common`. ``dpcore.cli:main`` is the console script;
``python -m dpcore`` and ``python -m dpcore.cli`` run it too.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence

from dpcore.cli.common import EXIT_BAD_INPUT as EXIT_BAD_INPUT
from dpcore.cli.common import _heartbeat as _heartbeat
from dpcore.cli.dashboard import app_path as app_path
from dpcore.cli.dashboard import cmd_app as cmd_app
from dpcore.cli.ledger import cmd_ledger as cmd_ledger
from dpcore.cli.parser import build_parser
from dpcore.cli.reproduce import cmd_reproduce as cmd_reproduce
from dpcore.cli.run import cmd_list as cmd_list
from dpcore.cli.run import cmd_run as cmd_run
from dpcore.cli.sample import cmd_sample as cmd_sample
from dpcore.core.errors import CLIError as CLIError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcore`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"dpcore: warning: {category.__name__}: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        try:
            return int(args.func(args) or 0)
        except (ValueError, TypeError, OSError, ImportError) as exc:
            # bad input (DataError, BudgetExceededError are ValueErrors): one line, no traceback
            return _fail(exc)
        except RuntimeError as exc:
            from dpcore.scale.dask_kmeans import ScaleError

            if not isinstance(exc, ScaleError):
                raise  # a bug: keep the traceback
            return _fail(exc)  # a failed cluster run


def _fail(exc: BaseException) -> int:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"dpcore: error: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT

