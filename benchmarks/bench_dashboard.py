"""Time to first result of every dashboard page, per data set (AppTest, caches cleared).

Targets: ≤ 2 s per page on the bundled sets (issue 25.4), ≤ 10 s per page on a 500k-row upload
(issue 23.7). "First result" is the first rendering that holds a chart with data: a page whose
computation is estimated under 2 s draws it on its first render; a longer one shows a Run button
with its expected time, which this benchmark clicks, then it reruns until the result is drawn
(the time includes the click and the wait). The Data page's time is the app's first run on that
data set (frame + loading); the ledger draws nothing in explore mode (its render time is shown).

The 500k-row upload is generated here (a public-by-construction Gaussian mixture with latitude /
longitude columns, written to CSV in memory) and uploaded through the Data page's uploader.

Prints a markdown table. Run: ``.venv/bin/python benchmarks/bench_dashboard.py [--rows 500000]
[--data cities earthquakes mixture upload]``; say the machine's load (``uptime``) with numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PAGES = ["pages/data.py", "pages/importance.py", "pages/friendlycore.py", "pages/clustering.py",
         "pages/utility.py", "pages/sensitivity.py", "pages/ledger.py", "pages/tour.py",
         "pages/game.py"]
#: Run buttons a page may show instead of computing at once (clicked once).
RUN_KEYS = ("clu_run", "pu_run", "fc_km_run", "importance_run", "friendlycore_run",
            "sensitivity_run")


def upload_csv(rows: int, seed: int = 0) -> bytes:
    """A public-by-construction mixture of 8 clusters as latitude/longitude, ``rows`` rows."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    centres = np.c_[rng.uniform(-60, 60, 8), rng.uniform(-170, 170, 8)]
    pts = centres[rng.integers(0, 8, rows)] + rng.normal(0, 3, (rows, 2))
    pts = np.clip(pts, [-90, -180], [90, 180])
    return pd.DataFrame({"latitude": pts[:, 0], "longitude": pts[:, 1]}).to_csv(
        index=False, float_format="%.5f").encode()


def has_result(at) -> bool:
    """Whether the page shows a chart with at least one trace with points."""
    from apptest_helpers import figure_specs

    for spec in figure_specs(at):
        for tr in spec.get("data", []):
            for axis in ("x", "y"):
                v = tr.get(axis)
                if isinstance(v, dict) and v.get("bdata"):
                    return True
                if isinstance(v, list) and v:
                    return True
    return False


def open_app(data: str, upload: bytes | None):
    from apptest_helpers import new_app

    if data != "upload":
        return new_app({"data": data})
    at = new_app()
    at.file_uploader(key="upload").set_value(("big.csv", upload, "text/csv"))
    at.run(timeout=300)
    return at


def first_result(at, page: str, limit: float = 300.0) -> tuple[float, str]:
    """Seconds from switching to ``page`` until a chart with data is drawn; how it came."""
    t0 = time.perf_counter()
    if page != "pages/data.py":
        at.switch_page(page).run(timeout=limit)
    if at.exception:
        return time.perf_counter() - t0, "error"
    if has_result(at) or page == "pages/ledger.py":
        return time.perf_counter() - t0, "at once"
    keys = [b.key for b in at.button if b.key in RUN_KEYS]
    if not keys:
        return time.perf_counter() - t0, "no result"
    at.button(key=keys[0]).click().run(timeout=limit)
    while not has_result(at) and time.perf_counter() - t0 < limit:
        time.sleep(0.25)
        at.run(timeout=limit)
    return time.perf_counter() - t0, ("after Run" if has_result(at) else "no result")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500_000, help="rows of the generated upload")
    ap.add_argument("--data", nargs="+", default=["cities", "earthquakes", "mixture", "upload"])
    ap.add_argument("--pages", nargs="+", default=PAGES)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from apptest_helpers import clear_caches, new_app

    t0 = time.perf_counter()
    new_app()  # process warm-up: imports of dpcore, scikit-learn, scipy (once per server)
    print(f"Process warm-up (imports, first app run): {time.perf_counter() - t0:.2f} s")
    print(f"Load average at start: {json.dumps(os.getloadavg())}\n")
    upload = upload_csv(args.rows) if "upload" in args.data else None
    print("| data | page | first result (s) | how | target |")
    print("|---|---|---:|---|:---:|")
    for data in args.data:
        target = 10.0 if data == "upload" else 2.0
        for page in args.pages:
            if not (ROOT / page).exists():
                continue
            clear_caches()
            t0 = time.perf_counter()
            at = open_app(data, upload)
            opened = time.perf_counter() - t0
            if page == "pages/data.py":
                secs, how = opened, "at once" if not at.exception else "error"
            else:
                secs, how = first_result(at, page)
            ok = "yes" if how in ("at once", "after Run") and secs <= target else "no"
            name = f"upload {args.rows:,} rows" if data == "upload" else data
            print(f"| {name} | {page} | {secs:.2f} | {how} | {ok} (≤ {target:g} s) |",
                  flush=True)
    print(f"\nLoad average at end: {json.dumps(os.getloadavg())}")


if __name__ == "__main__":
    main()
