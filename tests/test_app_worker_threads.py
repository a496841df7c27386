"""Every long computation runs in a worker thread that has no Streamlit session: nothing it calls
may read ``st.session_state`` (the bug: the Utility and Clustering pages read the declared box
inside their worker, so on a 500k-row upload, where the run is long enough to need its Run
button and thread, every sweep and fit failed with "The algorithm could not run with these
settings"; small data ran inline in the script thread and hid it).

Here every page's run is forced into its worker (``AUTO_SECONDS = 0``), then the test waits for
the job to finish and checks that it finished without an error.
"""

from __future__ import annotations

import pytest
from apptest_helpers import new_app

#: (page, its run panel's slot name, its Run button)
PANELS = [("pages/utility.py", "utility", "pu_run"),
          ("pages/clustering.py", "clustering", "clu_run"),
          ("pages/friendlycore.py", "fc_km", "fc_km_run")]


@pytest.mark.slow
@pytest.mark.parametrize("page, slot, button", PANELS, ids=[p[1] for p in PANELS])
def test_a_run_in_its_worker_thread_finishes_without_error(page, slot, button, monkeypatch):
    import pages._run as run

    monkeypatch.setattr(run, "AUTO_SECONDS", 0.0)  # every run waits for its button: a worker
    at = new_app({"data": "mixture"}, timeout=120)
    at.switch_page(page).run()
    assert button in [b.key for b in at.button], f"{page}: no {button} button"
    at.button(key=button).click().run()
    job = at.session_state[run._slot(slot)]
    assert job.thread is not None, "the run did not go to a worker thread"
    job.thread.join(timeout=300)
    assert job.done and not job.cancelled
    assert job.error is None, f"{page}'s worker failed: {job.error!r}"
