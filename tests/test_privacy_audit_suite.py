"""The privacy audit suite (issue 12): every released mechanism stays under its claim under the
worst-case add/remove pair, and a deliberately broken twin of each is flagged.

The cases live in :mod:`dpcore.audit_suite` (one table, also rendered into
``docs/privacy_audit.md``). Fast cases (≥ 10⁴ draws each, about 90 s together on a loaded 2-core
machine) run in CI; whole-fit cases (DP-Lloyd with a sampler, max-cover, FriendlyCore k-means)
are ``slow``.
"""

from __future__ import annotations

import warnings

import pytest

from dpcore.audit_suite import CASES, Case, markdown_table, run_case


def _param(case: Case):
    marks = [pytest.mark.slow] if case.slow else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_mechanism_stays_under_its_claim_and_its_broken_twin_is_flagged(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_case(case)
    assert res.passes, f"{case.name}: {res.real} against claimed ε = {case.claim.epsilon:.3g}"
    assert res.flags_broken, f"{case.name} ({case.broken_what}) not flagged: {res.broken}"


def test_every_released_mechanism_has_a_case():
    names = " ".join(c.name for c in CASES)
    for needed in ("DP-Lloyd (full data)", "uniform sampler", "coreset sampler",
                   "privacy sampler", "MaxCoverKMeans", "noisy_average", "FriendlyCore filter",
                   "friendly_mean", "FriendlyCoreKMeans", "CoinPress", "Sensitivity sampler",
                   "private_norm_quantile", "private_row_count", "Dask path",
                   "Balcan et al. 2017: private partition", "Balcan et al. 2017: private local",
                   "Balcan17KMeans", "KV18 mean", "LSH clustering",
                   "DPKMeans private ball: the centre", "DPKMeans on the private ball",
                   "FriendlyCovariance"):
        assert needed in names, needed
    assert all(c.n_samples >= 10_000 or c.slow for c in CASES)  # fewer draws only when slow


def test_table_marks_a_failing_mechanism():
    # The report must say FAIL when the real mechanism exceeds its claim (here: the broken twin
    # of the row count audited as if it were the real one).
    row = next(c for c in CASES if c.name == "bounds.private_row_count")
    fake = Case(row.name, row.config, row.claim, row.broken, row.broken, row.broken_what,
                row.d0, row.d1, 10_000)
    table = markdown_table([run_case(fake)])
    assert "| FAIL |" in table


def test_regenerating_the_doc_keeps_its_hand_written_sections(tmp_path, monkeypatch):
    # `--write` rebuilds the generated tables; the sections after the accountant table (the
    # door paths, written by hand from dpcore.audit_door) must survive it. Fails if main writes
    # only what it generated (as it did before: the door-path rows were lost on each run).
    import dpcore.audit_suite as suite

    monkeypatch.setattr(suite, "run_suite", lambda **kw: [])
    monkeypatch.setattr(suite, "accountant_session", lambda: None)
    monkeypatch.setattr(suite, "accountant_markdown",
                        lambda s: f"{suite.ACCOUNTANT_HEADING}\n\nnew accountant table\n")
    doc = tmp_path / "audit.md"
    hand = "## Door paths\n\nmeasured by hand\n"
    doc.write_text(f"# old\n\nold table\n\n{suite.ACCOUNTANT_HEADING}\n\nold accountant\n\n{hand}")
    suite.main(["--write", str(doc)])
    text = doc.read_text()
    assert text.endswith(hand) and "new accountant table" in text
    assert "old table" not in text and "old accountant" not in text
