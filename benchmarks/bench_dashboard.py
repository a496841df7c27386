"""First-render time of every dashboard page on the bundled data (AppTest, caches cleared).

Target (issue 7): ≤ 2 s per page. The Data page's time is the app's first run (frame + loading
the sample); the other pages are timed on switching to them right after, caches cleared.
Reference in the same run: the page's second render, where the Streamlit caches are warm, which
isolates the cost of the computation from the page frame.
Prints a markdown table. Run: ``.venv/bin/python benchmarks/bench_dashboard.py``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PAGES = ["pages/data.py", "pages/importance.py", "pages/friendlycore.py", "pages/clustering.py",
         "pages/utility.py", "pages/sensitivity.py", "pages/ledger.py"]


def main() -> None:
    warnings.simplefilter("ignore")
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from apptest_helpers import clear_caches, new_app

    t0 = time.perf_counter()
    new_app()  # process warm-up: imports of dpcore, scikit-learn, scipy (once per server)
    print(f"Process warm-up (imports, first app run): {time.perf_counter() - t0:.2f} s\n")
    print("| page | first render (s) | warm rerun (s) | ≤ 2 s |")
    print("|---|---:|---:|:---:|")
    for page in PAGES:
        if not (ROOT / page).exists():
            continue
        clear_caches()
        t0 = time.perf_counter()
        at = new_app()  # the app opens on the Data page: its first render loads the sample
        first = time.perf_counter() - t0
        if page != "pages/data.py":
            t0 = time.perf_counter()
            at.switch_page(page).run()
            first = time.perf_counter() - t0
        t0 = time.perf_counter()
        at.run()
        warm = time.perf_counter() - t0
        status = "error" if at.exception else ("yes" if first <= 2 else "no")
        print(f"| {page} | {first:.2f} | {warm:.2f} | {status} |")


if __name__ == "__main__":
    main()
