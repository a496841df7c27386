"""The door-path audit (:mod:`dpcore.audit_door`, the hand-written rows of
``docs/privacy_audit.md``): DPKMeans released through ``ReleaseDoor.release`` at the dashboard's
parameters stays under its ε on the private-ball path and on the box path, and a broken twin of
each is flagged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.audit_door import (
    DOOR_D0,
    DOOR_N,
    app_params,
    door_cases,
    door_markdown,
    run_door,
)
from dpcore.estimators.dpkmeans import DPKMeans


def test_the_audited_parameters_take_the_paths_the_rows_name():
    """Each row describes what runs: the app's parameters (the registry variant's, with the
    declared box) take the private ball, the box row and its twin the box, and the ball row's
    10ε twin stays on the ball. Fails if the registry stops sending the box, if
    ``seeding="auto"`` stops taking the ball there, or if a twin leaves its path (at ε = 10
    ``auto`` takes the box: an unpinned twin audited the box path twice)."""
    params = app_params(1.0)
    assert "seeding" not in params and params["bounds"] is not None and params["n"] == DOOR_N
    ball, box = door_cases()
    X = DOOR_D0 - 0.5 * np.array([10.0, 1.0])  # the door's centred coordinates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case, on_ball in ((ball, True), (box, False)):
            for p in (case.params, case.broken_params):
                assert (DPKMeans(**p, rng=0).fit(X).ball_ is not None) is on_ball, (case.name, p)


@pytest.mark.slow
def test_door_paths_stay_under_their_claim_and_their_broken_twins_are_flagged():
    """Fails if a door path leaks more than the ε it charges (a release computed on more than
    the charged ε, a ⊥ or a value that depends on the extra row outside the noise), or if the
    audit lost its power (a 10ε twin not flagged). 600 draws per input (the doc's rows: 2,000)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run_door(600)
    assert {r.case.name for r in results} == {
        "DPKMeans at the app's parameters (private ball)", "DPKMeans box path"}
    table = door_markdown(results)
    for r in results:
        assert r.passes, table
        assert r.flags_broken, table
