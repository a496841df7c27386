"""The FriendlyCore page's covariance panel (pages/_covariance.py), through Streamlit's AppTest."""

from __future__ import annotations

import pytest
from apptest_helpers import errors, new_app


@pytest.mark.slow
def test_covariance_panel_runs_and_shows_only_the_release():
    """The panel runs FC_Covariance on the loaded data (cities, 32,847 rows): at 300 parts the
    threshold is out of reach, so the answer is ⊥ in plain words with the run's guarantee. Bugs:
    the panel
    not wired into the page, an exception on ⊥, the core size shown (a non-DP output)."""
    at = new_app()
    at.switch_page("pages/friendlycore.py").run()
    assert not at.exception and not errors(at)
    at.number_input(key="fc_cov_t").set_value(300).run()
    at.button(key="fc_cov_run").click().run()
    assert not at.exception and not errors(at)
    infos = " ".join(i.value for i in at.info)
    captions = " ".join(c.value for c in at.caption)
    assert "⊥" in infos and "Guarantee of the whole run (one changed row)" in captions
    assert "core size" not in infos + captions
