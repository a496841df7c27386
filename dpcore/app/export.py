"""Code export: a run configuration as a runnable Python script or a Jupyter notebook.

What OpenDP's DP Wizard offers its users: every result the dashboard shows can be downloaded as
code that reproduces it with ``dpcore`` alone. The code embeds the JSON run configuration of
:mod:`dpcore.release.runconfig` (mechanism, parameters, data section, seed) and calls
:func:`dpcore.release.runconfig.run_config`, so it releases exactly what the dashboard released for
that configuration (same parameters, same seed → same output).

Outputs are written in the table's units (the declared centre added back, as the dashboard's
CSV downloads do); with a public description (per-column bounds, optional [−1, 1] scaling,
:mod:`dpcore.app.describe`) the bounds are applied to the table first, as in the dashboard.

The notebook is written as nbformat-4 JSON directly (a few lines; no ``nbformat`` dependency).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from dpcore.core.text import csv_safe_frame
from dpcore.release.runconfig import validate_config

__all__ = ["CSV_MARKER", "csv_text", "notebook", "python_script", "script_cells"]


def csv_text(df: pd.DataFrame) -> str:
    """The one writer of every CSV the dashboard offers for download.

    Formula prefixes neutralised (:func:`dpcore.core.text.csv_safe_frame`), and lines ended by
    CRLF as RFC 4180 says: Python's csv writer quotes a field only when it holds a character of
    the line terminator, so with pandas' ``"\n"`` a column named ``"\r=3"`` was written with a
    bare CR that split the header in two (issue 26); with ``"\r\n"`` both CR and LF are quoted.
    """
    return csv_safe_frame(df).to_csv(index=False, lineterminator="\r\n")

#: Line the exported code prints just before the released values' CSV.
CSV_MARKER = "# released values (CSV)"


def _header(config: dict) -> str:
    return (f"Reproduce a dpcore release: {config['mechanism']} (seed {config['seed']}), "
            "exported from the dpcore dashboard.")


def script_cells(config: dict[str, Any], *, description: dict[str, Any] | None = None
                 ) -> list[str]:
    """The code, as cells: set-up, configuration, data, run, output."""
    cfg = validate_config(config)
    cfg_json = json.dumps(cfg, indent=4, sort_keys=True)
    desc_json = json.dumps(description or None, indent=4)
    setup = (
        "import json\n"
        "import sys\n\n"
        "import numpy as np\n"
        "import pandas as pd\n\n"
        "from dpcore.app.describe import apply_description\n"
        "from dpcore.release.runconfig import read_table, run_config"
    )
    config_cell = (
        "# The run configuration (mechanism, parameters, public data description, seed).\n"
        f"CONFIG = json.loads(r'''{cfg_json}''')\n"
        "# Public per-column bounds applied to the table first (None: none declared).\n"
        f"DESCRIPTION = json.loads(r'''{desc_json}''')\n"
        "# Data: the source named in the configuration, or a path given on the command line.\n"
        "SOURCE = CONFIG['data']['source']\n"
        "if __name__ == '__main__' and len(sys.argv) > 1 and not sys.argv[1].startswith('-'):\n"
        "    SOURCE = sys.argv[1]"
    )
    data_cell = (
        "table, _ = read_table(SOURCE)\n"
        "if DESCRIPTION is not None:\n"
        "    table = apply_description(table, DESCRIPTION)"
    )
    run_cell = (
        "result = run_config(CONFIG, table)\n"
        "print(result.summary())"
    )
    output_cell = (
        "# Released values in the table's units (the declared centre added back).\n"
        "center = np.asarray(CONFIG['data']['center'] or 0.0, dtype=float)\n"
        "columns = CONFIG['data']['columns']\n"
        "frames = []\n"
        "for name, value in result.released.items():\n"
        "    if value is None or np.ndim(value) == 0:\n"
        "        continue\n"
        "    values = np.atleast_2d(np.asarray(value, dtype=float))\n"
        "    if values.shape[1] == len(columns):\n"
        "        values = values + center\n"
        "        frames.append(pd.DataFrame(values, columns=columns).assign(output=name))\n"
        "released = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()\n"
        f"print({CSV_MARKER!r})\n"
        "print(released.to_csv(index=False))"
    )
    return [setup, config_cell, data_cell, run_cell, output_cell]


def python_script(config: dict[str, Any], *, description: dict[str, Any] | None = None) -> str:
    """A standalone script: ``python script.py [DATA_FILE]`` prints the summary, then the
    released values as CSV."""
    cells = script_cells(config, description=description)
    doc = f'"""{_header(validate_config(config))}\n\nRun: python this_file.py [DATA_FILE]\n"""\n\n'
    return doc + "\n\n".join(cells) + "\n"


def notebook(config: dict[str, Any], *, description: dict[str, Any] | None = None) -> str:
    """The same code as a Jupyter notebook (nbformat 4 JSON)."""
    cfg = validate_config(config)
    cells: list[dict] = [{"cell_type": "markdown", "metadata": {},
                          "source": f"# {_header(cfg)}\n\nRun all cells; the last one shows the "
                                    "released values in the table's units."}]
    for code in script_cells(cfg, description=description):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                      "outputs": [], "source": code})
    nb = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3",
                                                      "language": "python", "name": "python3"},
                                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{i}"
    return json.dumps(nb, indent=1)
