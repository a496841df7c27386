"""Issue 22 (c): a realistic session (a row count, three DPKMeans, DP-Lloyd T = 10, max-cover,
FriendlyCore's mean, KV18) released through the door was charged ε = 6.50 at δ = 1e-5; the tight
total charges at most 4.69 and never less than a correct lower bound. The same session fills the
accountant table of docs/privacy_audit.md (dpcore.audit_suite.accountant_session)."""

from __future__ import annotations

import pytest

from dpcore.release.accountant_session import accountant_session


@pytest.fixture(scope="module")
def session():
    return accountant_session()


def test_session_was_charged_6_50_before_and_at_most_4_69_now(session):
    assert round(session.before, 2) == 6.50  # the audit's figure: basic, FriendlyCore as (ε, δ)
    assert session.tight <= 4.69
    assert session.tight < session.basic < session.before


def test_tight_total_never_below_a_correct_bound(session):
    assert session.lower <= session.tight
    assert session.lower <= session.rdp <= session.tight  # the filter pays for adaptivity
    assert session.lower <= session.pld


def test_releases_are_charged_with_their_parts(session):
    parts = {label.split(" ")[0]: (charged, n) for label, _, charged, n in session.rows}
    assert parts["dplloyd"][1] == 20  # T = 10 rounds of a count and a sum
    assert parts["dpkmeans"][1] >= 4 and parts["maxcover_kmeans"][1] >= 3
    charged, n = parts["friendly_mean"]
    assert "zCDP" in charged and n == 2  # kept as zCDP: composes natively with KV18
    assert all(a[0] in ("rr", "zcdp") for a in session.atoms)  # the door's noise is discrete
