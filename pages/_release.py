"""Release mode of every page: Streamlit views around :class:`dpcore.release.door.ReleaseDoor`.

Pages keep no release logic: in release mode a page calls one ``*_release_view()`` of this module
and stops. Everything here reads only public facts (the public description, the ledger, the
analyst's own widget values) and the door's DP outputs; the DP outputs are drawn inside
containers keyed ``dpout_…`` (the marking the neighbouring-data leak test reads). Widget limits
come from the public description, never from the table; no seed, timing, dtype, cell value or
true n is shown anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app.export import csv_text
from dpcore.app.plots import clip_to_box
from dpcore.app.summaries import centres_summary, points_summary
from dpcore.core.text import md_text
from dpcore.data.limits import check_number, check_radius
from dpcore.privacy.guarantees import RANDOM_DP_CAVEAT, BudgetExceededError
from dpcore.release.door import PROXY_ROWS, Release, ReleaseDoor, ReleaseRefused
from dpcore.release.runconfig import POINT_OUTPUTS, release_frame
from pages._common import check_delta_field, number_field, show


def door_or_stop() -> ReleaseDoor:
    """The release door of the session's private data set; stops the page when there is none."""
    from pages._common import release_door

    door = release_door()
    if door is None:
        st.stop()
    return door


def _show(fig, key: str) -> None:
    """Release charts get the explore pages' legible styling (contrast ≥ 4.5:1, issue 27.6)."""
    show(fig, key)


# ---- n: declared, or estimated privately (charged) -------------------------------------------


def n_panel(door: ReleaseDoor, page: str) -> None:
    """The public n: declared, or a DP estimate (shown as a DP output), or a button to make one."""
    if door.n_source == "declared":
        st.caption(f"n = {door.n:,} rows (declared in the public description).")
        return
    if door.n is not None:
        with st.container(key=f"dpout_n_{page}"):
            st.caption(f"n ≈ {door.n:,} rows (estimated privately, recorded in the ledger).")
        return
    st.warning("The number of rows n is private and not declared. Mechanisms need a public n: "
               "estimate it privately (the estimate is charged once and kept for every session).")
    c1, c2 = st.columns([1, 2])
    eps = number_field(c1, "ε for estimating n", f"{page}_n_eps",
                       lambda v: check_number("ε for estimating n", v, 0.01, 5.0), 0.1)
    if c2.button("Estimate n privately", key=f"{page}_n_estimate", icon=":material/lock_open:"):
        try:
            door.estimate_n(float(eps))
        except (BudgetExceededError, ReleaseRefused, TypeError) as exc:
            st.error(f"Refused, nothing was charged: {md_text(exc)}")
            return
        st.rerun()


# ---- releasing --------------------------------------------------------------------------------


def release_control(page: str, label: str, parts: Callable[[], list[tuple[str, dict, str]]]
                    ) -> None:
    """The release button of a page: ``parts() -> [(mechanism, params, label), …]``, released
    through the door as a whole; refusals (public reasons) are shown, nothing else."""
    from pages._common import ledger

    st.caption(f"Budget remaining before this release: {ledger().remaining()}. The release is "
               "charged before it is computed; a failure keeps the charge and releases ⊥.")
    if st.button(f"Release {label}", key=f"{page}_release", type="primary",
                 icon=":material/lock_open:"):
        door = door_or_stop()
        try:
            todo = parts()
            out = door.release_many([(m, p) for m, p, _ in todo], labels=[lab for *_, lab in todo],
                                    origin=page)
        except (ReleaseRefused, BudgetExceededError, TypeError) as exc:
            st.session_state.setdefault("release_refusals", {})[page] = _refusal_text(exc)
        else:
            st.session_state.setdefault("release_refusals", {}).pop(page, None)
            st.session_state["releases"][page] = out
        st.rerun()  # the sidebar, drawn before the page, shows the new remaining budget
    refusal = st.session_state.get("release_refusals", {}).get(page)
    if refusal:
        st.error(f"Release refused, nothing was charged or computed: {md_text(refusal)}")


def _refusal_text(exc: BaseException) -> str:
    """A refusal's public reason; a ledger that cannot be used says what kind of failure."""
    from dpcore.core.errors import LedgerError
    from dpcore.privacy.ledger_file import public_reason

    cause = exc.__cause__
    if isinstance(cause, LedgerError):
        return f"{exc} (The ledger: {public_reason(cause)}.)"
    return str(exc)


def releases_of(page: str) -> list[Release]:
    """The page's last release: this session's, else the one the lasting ledger kept (a reload
    or a new session of the same analyst shows it again)."""
    rel = st.session_state["releases"].get(page)
    if isinstance(rel, list):
        return rel
    from pages._common import is_release_mode, release_door

    if not is_release_mode():
        return []
    door = release_door()
    group = getattr(door.ledger, "last_group", None) if door is not None else None
    if group is None:
        return []
    from dpcore.core.errors import LedgerError
    from dpcore.privacy.guarantees import guarantee_from_dict
    from dpcore.privacy.ledger_outputs import output_arrays

    try:
        recs = group(page, door.ledger.analyst)
    except LedgerError:  # the page's own door check says why
        return []
    return [Release(output_arrays(r["output"]), guarantee_from_dict(r["_guarantee"]), r["label"])
            for r in recs]


def own_ledger(name: str, description, budget):
    """The dashboard's own release mode (the analyst is their own curator): the lasting ledger
    of the data set called ``name`` (:func:`dpcore.release.curator.release_ledger`), or None
    with the reason shown."""
    import sys

    from dpcore.core.errors import LedgerError
    from dpcore.release.curator import release_ledger
    from pages._login import ledger_message

    try:
        return release_ledger(name, description, budget, keep_stored_budget=True)
    except LedgerError as exc:
        print(f"dpcore: the privacy ledger cannot be used: {exc}", file=sys.stderr)
        st.error(ledger_message(exc))
    except ValueError as exc:  # e.g. a file name that cannot name a data set
        st.error(f"Release mode cannot open this data set's ledger: {md_text(exc)}")
    return None


def show_releases(page: str, door: ReleaseDoor, *, plane: Sequence[str] | None = None) -> None:
    """The page's last release: guarantees, values, a figure of the centres, downloads.

    All of it is a DP output (or ⊥), drawn in the ``dpout_<page>`` container.
    """
    rels = releases_of(page)
    if not rels:
        st.info("Nothing released from this page yet.")
        return
    cols = list(door.description.columns)
    with st.container(key=f"dpout_{page}"):
        for r in rels:
            if r.failed:
                st.warning(f"{r.label}: {r.message}")  # the door's fixed public text
            else:
                st.success(f"{r.label}: released under {r.guarantee}.")
        def shown(v) -> np.ndarray:
            return shown_points(door, v)

        centres = {r.label: shown(v) for r in rels if not r.failed
                   for name, v in r.output.items() if v is not None and name in ("centers",
                                                                                    "mean")}
        values = {f"{r.label}: {name}": np.atleast_1d(np.asarray(v, float)).ravel().tolist()
                  for r in rels if not r.failed for name, v in r.output.items()
                  if v is not None and name not in ("centers", "mean")}
        for what, v in values.items():
            st.markdown(f"**{what}** = {np.round(v, 5).tolist()}")
        if centres:
            from dpcore.app import plots
            lo_hi = door.description.box()
            fig = plots.centers_figure(
                None, {k: v[:, :2] if v.shape[1] > 1 else np.c_[v, np.zeros(len(v))]
                       for k, v in centres.items()},
                title="Released values (table units)",
                axis_titles=(cols[0], cols[1] if len(cols) > 1 else "(none)"),
                note="release mode: only DP outputs are drawn",
                ball=(door.description.center_array()[:2], float(door.radius))
                if lo_hi is None and door.d == 2 else None)
            _show(fig, f"dpout_{page}_fig")
            # DP outputs only (never n, never a count of the private rows)
            st.caption(centres_summary(centres, over="", clamped=table_box(door) is not None))
            # the CLI's layout (dpcore.release.runconfig.release_frame): table units and columns,
            # the release's label and guarantee; a declined release (⊥) is a row of empty cells
            frame = pd.concat([release_frame(
                {"centers": None} if r.failed else
                {n: shown(v) for n, v in r.output.items() if n in POINT_OUTPUTS},
                cols, r.label, r.guarantee) for r in rels], ignore_index=True)
            st.download_button("Released values (CSV)", csv_text(frame),
                               file_name=f"{page}_release.csv", mime="text/csv",
                               key=f"dpout_{page}_csv", on_click="ignore",
                               icon=":material/download:")
    st.download_button(
        "Release request (JSON)", json.dumps(release_request(door, page), indent=2),
        file_name=f"{page}_release_request.json", mime="application/json",
        key=f"{page}_request_json", on_click="ignore", icon=":material/download:",
        help="The public description and the mechanisms' public parameters (no seed: releases "
             "draw fresh randomness from the operating system).")


def shown_points(door: ReleaseDoor, v: Any) -> np.ndarray:
    """Released points as every page shows them (one rule for the figure, the CSV and the
    ledger, the explore pages' too, issue 27.8): table units, clamped into the declared box
    (post-processing of a DP output with public bounds)."""
    return clip_to_box(door.to_table_units(v), table_box(door))


def table_box(door: ReleaseDoor) -> list[tuple[float, float]] | None:
    """The declared per-column bounds in table units (public), or None when only a ball is."""
    desc = door.description
    if desc.lower is None or desc.upper is None:
        return None
    return list(zip(map(float, desc.lower), map(float, desc.upper), strict=True))


def release_request(door: ReleaseDoor, page: str) -> dict[str, Any]:
    """What was asked (public): description, mechanisms, parameters, guarantees. No seed."""
    return {"schema": door.description.to_dict(),
            "releases": [{"label": r.label, "guarantee": r.guarantee.as_dict()}
                         for r in releases_of(page)]}


# ---- the pages' release views ------------------------------------------------------------------


def _header(door: ReleaseDoor, page: str) -> None:
    st.caption("Release mode: only differentially private outputs are shown; every release is "
               "charged to the lasting ledger before it is computed.")
    n_panel(door, page)


def _eps_k() -> tuple[float, int]:
    ss = st.session_state
    return float(ss.get("eps", 1.0)), int(ss.get("k", 5))


def data_release_view() -> None:
    """The Data page: the public description and a synthetic proxy; no row of the table."""
    door = door_or_stop()
    desc = door.description
    _header(door, "data")
    rows = [{"column": c,
             "lower": None if desc.lower is None else desc.lower[j],
             "upper": None if desc.upper is None else desc.upper[j],
             "centre": desc.center_array()[j]} for j, c in enumerate(desc.columns)]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"Radius (public bound on ‖x − centre‖): {desc.radius:.4g}."
               if desc.radius is not None else "No radius declared.")
    st.info("The preview is a synthetic proxy drawn inside the declared bounds, not your data; "
            "only DP outputs of the mechanisms are released.")
    from dpcore.app import plots
    P = door.to_table_units(door.proxy(PROXY_ROWS))
    fig = plots.points_figure(P[:, :2] if door.d > 1 else np.c_[P, np.zeros(len(P))],
                              title=f"Synthetic proxy ({PROXY_ROWS:,} points, not your data)",
                              axis_titles=(desc.columns[0],
                                           desc.columns[1] if door.d > 1 else "(none)"))
    _show(fig, "data_proxy")
    st.caption(points_summary(P[:, :2] if door.d > 1 else np.c_[P, np.zeros(len(P))],
                              (desc.columns[0], desc.columns[1] if door.d > 1 else "(none)"),
                              "synthetic points drawn inside the declared bounds (not your data)"))


def importance_release_view() -> None:
    door = door_or_stop()
    _header(door, "importance")
    eps, k = _eps_k()
    c1, c2 = st.columns(2)
    sampler = c1.selectbox("Sampler", ["privacy (sampling for free)", "none (all rows)",
                                       "coreset", "uniform"], key="imp_rel_sampler",
                           help="coreset and uniform read n or the mean squared norm off the "
                                "data: the door refuses them.")
    T = c2.slider("Iterations T", 1, 30, 10, key="imp_rel_T")
    name = sampler.split(" ")[0]
    params = {"n_clusters": k, "epsilon": eps, "n_iter": int(T),
              "sampler": None if name == "none" else name}
    if name in ("coreset", "uniform"):
        params["sample_size"] = float(min(PROXY_ROWS, door.n or PROXY_ROWS))
    release_control("importance", f"DP-Lloyd centres (ε = {eps:g})",
                    lambda: [("dplloyd", params, "DP-Lloyd centres")])
    show_releases("importance", door)


def clustering_release_view() -> None:
    from dpcore.app.sweeps import clustering_algorithms

    door = door_or_stop()
    _header(door, "clustering")
    eps, k = _eps_k()
    algorithms = {n: a for n, a in clustering_algorithms().items() if a.private}
    default = [n for n in ("DP-Lloyd",) if n in algorithms]
    c1, c2 = st.columns([3, 1])
    chosen = c1.multiselect("Algorithms", list(algorithms), default=default, key="clu_rel_algs")
    delta = number_field(c2, "δ (for (ε, δ) algorithms)", "clu_rel_delta", check_delta_field,
                         1e-6)
    st.caption("Each algorithm is a part of one release: all parts are charged together (ε each) "
               "or none is.")

    def parts():
        n = door.n
        if n is None:
            raise ReleaseRefused("estimate n first")
        return [(algorithms[a].mechanism,
                 algorithms[a].params(k, eps, float(delta), float(door.radius), int(n)), a)
                for a in chosen]

    if chosen:
        release_control("clustering", f"centres of {len(chosen)} algorithm(s) at ε = {eps:g} "
                                      "each", parts)
    show_releases("clustering", door)


def friendlycore_release_view() -> None:
    door = door_or_stop()
    _header(door, "friendlycore")
    eps, _ = _eps_k()
    c1, c2 = st.columns(2)
    r = number_field(c1, "Friend radius r (public)", "fc_rel_r",
                     lambda v: check_radius(v, "friend radius r"), float(f"{door.radius / 2:.3g}"))
    delta = number_field(c2, "δ", "fc_rel_delta", check_delta_field, 1e-6)
    c1, c2 = st.columns(2)
    with_kv = c1.checkbox("Also release KV18 (charged on top)",
                          key="fc_rel_kv18",
                          help="For comparison, at the same ρ as the FriendlyCore mean and "
                               "charged on top of it. "
                               "Karwa & Vadhan 2018, FriendlyCore's averaging baseline: a "
                               "private σ-bin histogram per coordinate, clipping around its "
                               "peak, a Gaussian-noise mean. It assumes Gaussian rows with a "
                               "known, public spread σ.")
    kv_sigma = number_field(c2, "KV18 σ (public spread of one coordinate)", "fc_rel_kv_sigma",
                            lambda v: check_radius(v, "KV18 σ"), float(f"{door.radius / 4:.4g}"),
                            disabled=not with_kv)

    def parts() -> list[tuple[str, dict, str]]:
        from dpcore.mechanisms.friendlycore.averaging import rho_for_epsilon

        out = [("friendly_mean", {"radius": float(r), "epsilon": eps, "delta": float(delta)},
                "FriendlyCore mean")]
        if with_kv:  # FC_Avg's own ρ at (ε, δ): the same spend as the FriendlyCore mean
            out.append(("kv18_mean", {"rho": rho_for_epsilon(eps, float(delta) / 2.0),
                                      "sigma": float(kv_sigma), "radius": float(door.radius)},
                        "KV18 mean (comparison)"))
        return out

    release_control("friendlycore", f"FriendlyCore mean (ε = {eps:g})"
                    + (" and KV18" if with_kv else ""), parts)
    show_releases("friendlycore", door)


def sensitivity_release_view() -> None:
    from dpcore.mechanisms.sensitivity.statistics import STATISTICS

    door = door_or_stop()
    _header(door, "sensitivity")
    eps, k = _eps_k()
    menu = [m for m in ("mean", "median", "trimmed_mean", "quantile", "kmeans_centres",
                        "least_squares", "ridge") if m in STATISTICS]
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Statistic", menu, key="sens_rel_stat")
    mechanism = c2.radio("Mechanism", ["laplace", "gaussian"], horizontal=True,
                         key="sens_rel_mech")
    gamma = c3.select_slider("γ", [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5], value=0.1,
                             key="sens_rel_gamma")
    delta = number_field(st, "δ (Gaussian)", "sens_rel_delta", check_delta_field,
                         1e-6) if mechanism == "gaussian" else 0.0
    box = door.description.box()
    lo, hi = ((float(box[0].min()), float(box[1].max())) if box is not None
              else (-float(door.radius), float(door.radius)))
    stat_params: dict = {}
    if "bounds" in STATISTICS[name].params:
        stat_params["bounds"] = [lo, hi]
    if name == "kmeans_centres":
        stat_params["k"] = k
    params = {"statistic": name, "epsilon": eps, "statistic_params": stat_params,
              "oracle": "uniform", "bounds": [lo, hi], "gamma": gamma, "delta": float(delta),
              "mechanism": mechanism}
    if door.ledger.budget.kind != "RandomDP":
        st.warning("This release is (ε, δ, γ)-random DP: the total budget needs a γ > 0.")
    release_control("sensitivity", f"{name} (ε = {eps:g})",
                    lambda: [("sensitivity", params, f"sensitivity sampler: {name}")])
    show_releases("sensitivity", door)


def proxy_dataset():
    """The utility page's data in release mode: a public proxy with the declared radius."""
    from types import SimpleNamespace

    door = door_or_stop()
    X = door.proxy(PROXY_ROWS)
    return SimpleNamespace(X=X, radius=float(door.radius), fp=door.description.to_json(None),
                           n=PROXY_ROWS, d=door.d)


def _totals_rows(acc, share: dict | None) -> list[dict[str, str]]:
    """Both totals of each account (issue 22 item 3), and of the analyst's own share."""
    rows = [{"account": "DP (data set)", "basic composition": str(acc.dp_basic),
             "tight (Rényi filter)": "—" if acc.dp_tight is None else str(acc.dp_tight),
             "refuses by": acc.refuses_by, "budget": str(acc.dp_budget)}]
    if acc.random_budget is not None:
        rows.append({"account": "random DP (data set)",
                     "basic composition": str(acc.random) if acc.random_entries else "none",
                     "tight (Rényi filter)": "— (not composed in RDP)",
                     "refuses by": "basic", "budget": str(acc.random_budget)})
    if share is not None:
        rows.append({"account": f"DP: your share ({share['analyst']})",
                     "basic composition": str(share["basic"]),
                     "tight (Rényi filter)": share["tight"] or "—",
                     "refuses by": "the data set's rule", "budget": str(share["allocation"])})
        if share["random"] is not None:
            rows.append({"account": f"random DP: yours ({share['analyst']})",
                         "basic composition": share["random"], "tight (Rényi filter)": "—",
                         "refuses by": "the data set's account", "budget": "—"})
    return rows


def _kept_frame(recs: list[dict], door: ReleaseDoor) -> pd.DataFrame | None:
    """The kept outputs as the release pages show theirs: the CSV's layout (one row per point,
    in the table's columns), points by :func:`shown_points`, numbers rounded as the pages
    round them; a ⊥ is a row of empty cells. ``#`` is the entry's number above."""
    from dpcore.privacy.ledger_outputs import output_arrays

    cols, frames = list(door.description.columns), []
    for i, r in enumerate(recs):
        if not r["kept"]:
            continue
        for name, v in (output_arrays(r["output"]) or {"⊥": None}).items():
            shown = None if v is None else shown_points(door, v) if name in POINT_OUTPUTS else v
            f = release_frame({name: shown}, cols, r["label"], r["released_guarantee"])
            f.insert(0, "output", "⊥" if v is None else name)
            f.insert(0, "#", i + 1)
            frames.append(f)
    if not frames:
        return None
    frame = pd.concat(frames, ignore_index=True).rename(columns={"algorithm": "label"})
    first = ["#", "label", "guarantee", "output"]
    return frame[first + [c for c in frame.columns if c not in first]].round(5)


#: What the ledger's JSON download says of each release (its DP output has its own download).
_PUBLIC_FIELDS = ("label", "mechanism", "params", "guarantee", "account", "analyst", "origin")


def ledger_release_view(*, curator: bool) -> None:
    """The lasting ledger of the data set: totals (basic and tight, per account; the analyst's
    own share in a curator deployment), entries with their kept DP outputs (an analyst sees only
    their own), export. No seed, no time."""
    from dpcore.app import plots
    from dpcore.privacy.ledger_outputs import ANY
    from pages._common import ledger

    lasting = ledger()
    led = lasting.snapshot()
    analyst = getattr(lasting, "analyst", None)
    acc, remaining = led.accounts(), lasting.remaining()
    total = lasting.allowance() if hasattr(lasting, "allowance") else led.budget
    share = lasting.share_accounts(analyst) if analyst is not None else None
    c1, c2, c3 = st.columns(3)
    c1.metric("ε budget" if share is None else "ε of your share", f"{total.epsilon:.4g}")
    c2.metric("ε spent (DP account)", f"{total.epsilon - remaining.epsilon:.4g}",
              help=f"refusals use the {acc.refuses_by} total")
    c3.metric("ε remaining", f"{remaining.epsilon:.4g}")
    tight = "" if acc.dp_tight is None else f"; tight (Rényi filter over the parts) {acc.dp_tight}"
    st.markdown(f"**Budget** {led.budget} · **DP account** spent {acc.dp_spent} "
                f"({acc.refuses_by}; basic composition {acc.dp_basic}{tight}) · **remaining** "
                f"{led.remaining()}")
    if acc.random_budget is not None:
        st.markdown(f"**Random-DP account** {acc.random} over {acc.random_entries} release(s), "
                    f"against {acc.random_budget}; these releases are not in the DP account.")
        st.caption(RANDOM_DP_CAVEAT)
    st.table(pd.DataFrame(_totals_rows(acc, share)).set_index("account"))
    spent = total.epsilon - remaining.epsilon
    _show(plots.budget_bar(spent, total.epsilon), "ledger_bar")
    st.caption(f"Chart: ε spent {spent:.4g} of {total.epsilon:.4g}"
               + (f" ({spent / total.epsilon:.0%})." if total.epsilon else "."))
    recs = lasting.records(analyst if analyst is not None else ANY)
    rows = [{"#": i + 1, "label": r["label"], "guarantee": r["guarantee"],
             "account": "random DP" if r["account"] == "random" else "DP",
             "parameters": json.dumps(r["params"], sort_keys=True, default=str)}
            for i, r in enumerate(recs)]
    if share is not None:
        st.caption("Your releases (each analyst sees only their own; the totals above count "
                   "every analyst's).")
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        kept = _kept_frame(recs, door_or_stop())
        if kept is not None:
            with st.container(key="dpout_ledger"):  # kept DP outputs (⊥ included)
                st.caption("Released outputs, kept with their entries (public once released), "
                           "as their page showed them: table units, points clamped into the "
                           "declared box.")
                st.dataframe(kept, hide_index=True)
                st.download_button(
                    "Released outputs (CSV)", csv_text(kept), file_name="released_outputs.csv",
                    mime="text/csv", key="dpout_ledger_outputs", on_click="ignore",
                    icon=":material/download:")
    else:
        st.write("No release recorded yet.")
    doc = {"budget": led.budget.as_dict(), "total": led.total().as_dict(),
           "remaining": remaining.as_dict(), "accounts": acc.as_dict(),
           "share": share,
           "entries": [{k: v for k, v in r.items() if k in _PUBLIC_FIELDS} for r in recs]}
    st.download_button("Ledger (JSON)", json.dumps(doc, indent=2, default=str),
                       file_name="privacy_ledger.json", mime="application/json",
                       key="ledger_json", on_click="ignore", icon=":material/download:")
    if curator:
        st.caption("This ledger lasts: every session, reload and restart sees it. Only the data "
                   "curator can reset it (`dpcore ledger reset`).")
