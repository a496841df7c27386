"""FriendlyCore page: the covariance panel (paper 002, App. A: FC_Covariance).

Called from ``pages/friendlycore.py`` (explore mode). Shows only the mechanism's released
output (Σ̂ or ⊥) and its guarantee; the parts, their friend counts and the core stay private.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import streamlit as st

from dpcore.mechanisms.friendlycore.covariance import fc_covariance, gamma_cov
from pages._common import keep, matrix_frame
from pages._plain import show_plain_error
from pages._run import run_panel


def _run(X: np.ndarray, n: int, eps: float, delta: float, t: int, eta: float, c1: float,
         seed: int) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n is the declared (public) row count: n_public below
        try:
            res = fc_covariance(X, epsilon=eps, delta=delta, t=t, eta=eta, c1=c1, n_public=n,
                                rng=seed)
        except ValueError as exc:  # ParameterError / DataError: a clear message, no traceback
            return {"error": str(exc)}
    return {"estimate": res.estimate, "privacy_": res.privacy_}


def covariance_panel(ds, eps: float, seed: int) -> None:
    """FC_Covariance on the loaded data: parts, FriendlyCore on their covariance matrices,
    FriendlyCovariance on the core (no bound on ‖Σ‖ needed)."""
    st.subheader("Covariance matrix (App. A)")
    st.caption(
        "FC_Covariance splits the rows into t parts, computes each part's second-moment matrix "
        "(the data are assumed centred), keeps the matrices that are close to most others in a "
        "scale-free distance, and releases a noisy version of their mean, or ⊥ when too few "
        "survive. Second moments are about the declared centre. It needs no bound on the size "
        "of the covariance, but many parts: thousands, "
        "so millions of rows.")
    c1_, c2_, c3_, c4_ = st.columns(4)
    t = int(c1_.number_input("Parts t", 2, max(2, ds.n), value=max(2, min(1000, ds.n // 50)),
                             **keep("fc_cov_t")))
    eta = c2_.number_input("Noise η", 1e-4, 10.0, value=0.1, format="%.3g", **keep("fc_cov_eta"))
    c1 = c3_.number_input("Constant c₁", 1e-6, 1e3, value=1.0, format="%.3g",
                          **keep("fc_cov_c1"),
                          help="The abort threshold is c₁/γ; the paper leaves c₁ unspecified.")
    delta = c4_.number_input("δ", 1e-12, 0.5, value=1e-6, format="%.1e", **keep("fc_cov_delta"))
    e = min(float(eps), 1.0)
    need = c1 / gamma_cov(eta, 0.9 * e, delta * math.exp(-0.1 * e), ds.d) \
        + math.log(1 / delta) / (0.1 * e)
    st.caption(f"ε = {e:g} (App. A needs ε ≤ 1). Releasing needs more than about {need:,.0f} "
               f"friendly parts (public threshold from ε, δ, η, c₁, d); you have t = {t:,}.")
    key = (ds.fp, e, float(delta), t, float(eta), float(c1), seed)
    job = run_panel("fc_cov", key=key, seconds=1e-6 * ds.n * ds.d ** 2 + 1e-7 * t * t,
                    fn=lambda: _run(ds.X, ds.n, *key[1:]), label="Run FC_Covariance",
                    button_key="fc_cov_run", auto=False)
    if job is None or job.result is None or job.key[0] != ds.fp:
        return
    out = job.result
    if "error" in out:
        show_plain_error(out["error"], lead="FC_Covariance cannot run with these settings. ")
        return
    if out["estimate"] is None:
        st.info("⊥: FC_Covariance declined to release (too few friendly parts for the noisy "
                "threshold). Use more rows, fewer parts only if each still has many rows, a "
                "larger η or ε.")
    else:
        st.dataframe(matrix_frame(out["estimate"], list(ds.columns)), hide_index=True)
    st.caption(f"Guarantee of the whole run (one changed row): {out['privacy_']}")
