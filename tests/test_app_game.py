"""The privacy game (issue 25.3): its mechanism, its optimal guesser, its bound and its page."""

from __future__ import annotations

import math

import numpy as np
import pytest
from apptest_helpers import clear_caches, errors, figure_specs, new_app, trace_array

from dpcore.app import game

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)


@pytest.mark.parametrize("eps", [0.25, 1.0, 3.0])
def test_the_best_guesser_reaches_its_rate_and_never_the_bound_from_above(eps):
    """4,000 rounds of the likelihood-ratio test: the rate matches 1 − e^{−ε/2}/2 (±4 sd) and
    stays under the bound's upper band. Fails if the released count skips the noise (rate 1),
    uses the wrong scale (ε·2: rate above the band), or the test's threshold is off by one
    (rate near 0.5 + its gap)."""
    gen = np.random.default_rng(11)
    n, rounds = 1_000, 4_000
    hits = []
    for _ in range(rounds):
        r = game.play_round(n, eps, gen)
        hits.append(game.optimal_guess(r.released, n) == r.secret)
    rate = float(np.mean(hits))
    p = game.optimal_rate(eps)
    assert abs(rate - p) <= 4 * math.sqrt(p * (1 - p) / rounds)
    assert rate <= game.bound_band(eps, rounds)[1]
    assert p < game.bound(eps)  # the count is not the worst case: strictly under the bound


def test_the_coin_is_fair_and_seeded():
    a = [game.play_round(50, 1.0, np.random.default_rng((3, i))) for i in range(400)]
    b = [game.play_round(50, 1.0, np.random.default_rng((3, i))) for i in range(400)]
    assert a == b
    share = np.mean([r.secret for r in a])
    assert 0.4 < share < 0.6


def test_the_band_narrows_with_rounds_and_contains_the_bound():
    b = game.bound(1.0)
    assert b == pytest.approx(math.e / (1 + math.e))
    lo10, hi10 = game.bound_band(1.0, 10)
    lo200, hi200 = game.bound_band(1.0, 200)
    assert lo10 < lo200 < b < hi200 < hi10


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_the_audit_finds_an_epsilon_close_to_and_not_above_the_claim(eps):
    """A lower bound at 95 %: ≤ ε (plus a little for the 5 %), and > ε/2 at 20,000 draws (a
    broken audit wiring, e.g. the same table twice, gives 0)."""
    res = game.audit_count(500, eps, rng=5)
    assert eps / 2 < res.epsilon_lower <= eps * 1.05


def test_page_plays_rounds_and_draws_the_rate_against_the_bound():
    """Guess buttons advance the game and the chart's rate trace grows; the computer's 100
    rounds stay within the band. Fails if a guess is not recorded or the chart ignores it."""
    clear_caches()
    at = new_app({"data": "mixture"})
    at.switch_page("pages/game.py").run()
    assert not at.exception and not errors(at)
    at.button(key="game_guess_1").click().run()
    at.button(key="game_guess_0").click().run()
    assert len(at.session_state["game_state"]["guesses"]) == 2
    at.button(key="game_auto").click().run()
    st_ = at.session_state["game_state"]
    assert len(st_["guesses"]) == 102
    spec = figure_specs(at)[0]
    rate = next(t for t in spec["data"] if t["name"] == "your guess rate")
    assert trace_array(rate, "x").shape == (102,)
    correct = np.mean(np.array(st_["guesses"][2:]) == np.array(st_["secrets"][2:]))
    assert correct <= game.bound_band(1.0, 100)[1]
    assert any("Chart: after 102 round(s)" in c.value for c in at.caption)


def test_release_mode_offers_no_game():
    clear_caches()
    at = new_app({"mode": "release"})
    at.switch_page("pages/game.py").run()
    assert not at.exception
    assert not figure_specs(at)
    assert any("explore mode only" in i.value for i in at.info)


def test_no_game_in_a_curator_deployment(tmp_path, monkeypatch):
    """The game shows the true n: a curator deployment (dpcore app --private) must not list it,
    nor open it by its address. Fails if the page is added to the navigation unconditionally."""
    import json

    import pandas as pd
    from apptest_helpers import APP
    from streamlit.testing.v1 import AppTest

    clear_caches()
    data, schema = tmp_path / "private.csv", tmp_path / "schema.json"
    pd.DataFrame(np.random.default_rng(5).normal(0, 2, (300, 2)), columns=["a", "b"]).to_csv(
        data, index=False)
    schema.write_text(json.dumps({"columns": ["a", "b"], "lower": [-8, -8], "upper": [8, 8],
                                  "n": 300}))
    monkeypatch.setenv("DPCORE_PRIVATE_DATA", str(data))
    monkeypatch.setenv("DPCORE_PRIVATE_SCHEMA", str(schema))
    monkeypatch.setenv("DPCORE_PRIVATE_BUDGET", "3,1e-5")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert "pages/game.py" not in at.session_state["nav_pages"]
    assert "pages/tour.py" in at.session_state["nav_pages"]  # the frame itself did list pages
    with pytest.raises(ValueError):
        at.switch_page("pages/game.py")
    clear_caches()
