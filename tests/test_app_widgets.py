"""Number fields never clamp silently (issue 26): the sidebar's k, seed and budget, and the
pages' δ, r, n and m fields.

Streamlit's bounded ``number_input`` put an out-of-range or non-finite value back to its minimum
or its default without a word (its deserialiser does so on the server, the browser clamps too),
so what was shown and what was used could differ. Each field is now a checked text field
(``pages/_common.checked_number`` / ``number_field``): these tests type hostile values and check
the message, the value shown and the value used.
"""

from __future__ import annotations

import pytest
from apptest_helpers import errors, new_app

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)

HOSTILE = ["1e309", "-5", "inf", "nan", "abc"]


def _field(at, key: str):
    return next(w for w in [*at.sidebar.text_input, *at.text_input] if w.key == key)


def _refused(at, key: str, typed: str, before: str) -> None:
    """Typing ``typed`` gives the "was not used … previous value is kept" message, and the field
    shows ``before`` again (catches a clamp to a bound, a reset to the default, or a value
    taken silently)."""
    _field(at, key).input(typed).run()
    assert not at.exception
    msgs = [e.value.replace("\\", "") for e in errors(at)]
    assert any("was not used" in m and "previous value" in m for m in msgs), (key, typed, msgs)
    assert _field(at, key).value == before, (key, typed)


@pytest.mark.parametrize(("key", "out_of_range", "good", "used"), [
    ("k", ["0", "51", "2.5"], "7", lambda ss: int(ss["k"])),
    ("seed", ["2147483648", "0.5"], "11", lambda ss: int(ss["seed"])),
    ("budget_eps", ["0", "1001"], "3", lambda ss: ss["ledger"].budget.epsilon),
    ("budget_delta", ["0.2"], "1e-05", lambda ss: ss["ledger"].budget.delta),
])
def test_sidebar_field_refuses_out_of_range_and_uses_what_it_shows(key, out_of_range, good,
                                                                   used):
    """Bug caught: a bounded ``number_input`` turned ``1e309`` or ``-5`` into its bound or its
    default (k = 5 shown as typed, 1 used; an ε budget of 1e309 became the default 10)."""
    at = new_app()
    before = _field(at, key).value
    assert float(before) == used(at.session_state)  # shown = used
    for typed in [*HOSTILE, *out_of_range]:
        _refused(at, key, typed, before)
        assert used(at.session_state) == float(before)
    _field(at, key).input(good).run()  # a valid value is taken as typed
    assert not at.exception and not errors(at)
    assert _field(at, key).value == good and used(at.session_state) == float(good)


def test_gamma_budget_is_refused_above_half_and_used_when_valid():
    """γ ∈ [0, 0.5]: 0.6 refused (not clamped to 0.5); 0.2 makes the budget (ε, δ, γ)-random DP."""
    at = new_app()
    for typed in ["0.6", "-5", "1e309"]:
        _refused(at, "budget_gamma", typed, "0")
    assert not hasattr(at.session_state["ledger"].budget, "gamma") or \
        at.session_state["ledger"].budget.gamma == 0
    _field(at, "budget_gamma").input("0.2").run()
    assert at.session_state["ledger"].budget.gamma == 0.2


@pytest.mark.slow
def test_friendlycore_radius_delta_and_rows_are_checked():
    """Bug caught: FriendlyCore's r (minimum 1e-9) took ``1e309`` as 1e-9, so no point had a
    friend; δ and the rows used clamped to their bounds the same way."""
    at = new_app({"data": "cities"})
    at.switch_page("pages/friendlycore.py").run()
    r_key = next(w.key for w in at.text_input if w.key.startswith("fc_r3_"))
    for key, bad in ((r_key, ["0", *HOSTILE]), ("fc_delta", ["0.5", "-5", "1e309"]),
                     ("fc_n_32847", ["5", "40000", "1e309"])):
        before = _field(at, key).value
        for typed in bad:
            _refused(at, key, typed, before)
    _field(at, r_key).input("2").run()
    assert not at.exception and _field(at, r_key).value == "2"


@pytest.mark.slow
def test_release_friend_radius_refused_then_charged_as_shown():
    """Release mode: a refused r keeps the previous one, and the release is charged with the r
    shown (catches a release run at a clamped r the analyst never saw)."""
    at = new_app({"data": "cities", "mode": "release"})
    at.switch_page("pages/friendlycore.py").run()
    before = _field(at, "fc_rel_r").value
    _refused(at, "fc_rel_r", "1e309", before)
    _refused(at, "fc_rel_delta", "0.5", _field(at, "fc_rel_delta").value)
    at.button(key="friendlycore_release").click().run()
    assert not at.exception and not errors(at)
    entry = at.session_state["_door"][1].ledger.entries[-1]
    assert entry.params["radius"] == float(before)


def test_mixture_and_private_radius_fields_are_checked():
    """Data page: the synthetic mixture's n / d / components / σ and the private-radius
    estimate's quantile and ε. Bug caught: ``n = 50`` became the minimum 100 and ``σ = 1e309``
    the default, and the mixture generated was not the one the fields showed."""
    from pages._common import MIXTURE

    def mixture(at) -> dict:  # the parameters the generator is called with
        return at.session_state["mixture"] if "mixture" in at.session_state else MIXTURE

    at = new_app({"data": "mixture"})
    used = {"mix_n": "n", "mix_d": "d", "mix_k": "k", "mix_sigma": "sigma"}
    for key, bad in (("mix_n", ["50", "2e6"]), ("mix_d", ["0", "101"]),
                     ("mix_k", ["0", "51"]), ("mix_sigma", ["0", "101"])):
        before = _field(at, key).value
        for typed in [*bad, *HOSTILE]:
            _refused(at, key, typed, before)
            assert mixture(at)[used[key]] == float(before)
    _field(at, "mix_n").input("2000").run()
    assert mixture(at)["n"] == 2000 and _field(at, "mix_n").value == "2000"
    for key, bad in (("pr_q", ["0.4", "1.5"]), ("pr_eps", ["0", "11"])):
        before = _field(at, key).value
        for typed in [*bad, "1e309", "-5"]:
            _refused(at, key, typed, before)
