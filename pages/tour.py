"""Guided tour for teaching: six short steps from ε to private clustering, each with one small
interactive figure and one paragraph. Everything runs on small synthetic data (public by
construction), so a class can play with it freely; sized for a projector (1024 px wide)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.app import plots
from dpcore.app.style import legible
from dpcore.app.summaries import (
    amplification_summary,
    centres_summary,
    histogram_summary,
    kept_removed_summary,
    laplace_pair_summary,
)
from dpcore.data.limits import check_count
from dpcore.mechanisms.friendlycore import friend_counts
from dpcore.mechanisms.lloyd.estimator import DPLloyd
from dpcore.privacy.noise import laplace
from pages._common import init_state, number_field

init_state()
st.title("Guided tour")
st.caption("Six steps, one idea each. Move the sliders; nothing here touches your data.")

STEPS = ["1 · ε", "2 · Neighbours", "3 · Noise on a count", "4 · Sampling", "5 · Friendly core",
         "6 · Clustering"]
step = st.segmented_control("Step", STEPS, default=STEPS[0], key="tour_step",
                            label_visibility="collapsed")
step = step or STEPS[0]
rng_seed = 7


def _demo_points(n: int = 300, seed: int = rng_seed) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = np.array([[-3.0, -1.0], [3.0, 2.0], [0.0, 4.0]])
    X = means[rng.integers(0, 3, n)] + rng.normal(0, 0.8, (n, 2))
    return np.r_[X, rng.uniform(-9, 9, (n // 30, 2))]  # a few outliers


def _chart(fig, key: str, width: str = "stretch") -> None:
    """A tour figure with projector-legible text (dark, large; dpcore.app.style.legible)."""
    st.plotly_chart(legible(fig), key=key, width=width)


def _core_points(n: int = 300, n_far: int = 20, seed: int = rng_seed):
    """One dense group (what FriendlyCore averages) and ``n_far`` far-away points on a ring of
    radius 6–9 around it; returns the points and which are far away."""
    rng = np.random.default_rng(seed)
    angle, dist = rng.uniform(0, 2 * np.pi, n_far), rng.uniform(6.0, 9.0, n_far)
    X = np.r_[rng.normal(0.0, 1.0, (n, 2)), np.c_[dist * np.cos(angle), dist * np.sin(angle)]]
    return X + np.array([1.0, 1.0]), np.r_[np.zeros(n, bool), np.ones(n_far, bool)]


def _core_sentence(kept: int, total: int, far_removed: int, n_far: int) -> str:
    """What the picture shows at this r, in words that match it."""
    if kept <= total / 2:
        return ("At this small r even the dense group falls apart: most points have too few "
                "friends. Move r up.")
    if far_removed < n_far:
        return ("At this large r far-away points count as friends too and stay in the core: "
                "averaging it would need more noise. Move r down.")
    return ("The dense group is the core; the far-away points are dropped. Try a small and a "
            "large r.")


if step == STEPS[0]:
    eps = st.slider("ε", 0.1, 5.0, 1.0, 0.1, key="tour_eps")
    st.write(
        "A differentially private answer is random. **ε** bounds how much the chance of any "
        "answer can change when one person is added to or removed from the data: at most by a "
        f"factor e^ε (here {np.exp(eps):.3g}). Small ε: the two curves nearly coincide, and "
        "nobody can tell from the answer whether you were in the data.")
    plots_fig = plots.laplace_pair_figure(eps)
    _chart(plots_fig, key="tour_fig_eps", width="stretch")
    st.caption(laplace_pair_summary(eps))
elif step == STEPS[1]:
    X = _demo_points(60)
    who = st.slider("Which person leaves the data set", 0, len(X) - 1, 17, key="tour_who")
    st.write(
        "Two data sets are **neighbours** when they differ in one person's row. Privacy is a "
        "promise about every such pair: whatever the algorithm shows on the left data set it "
        "shows, with almost the same probability, on the right one, for every person you pick.")
    cats = np.where(np.arange(len(X)) == who, "the one person who differs", "everyone else")
    _chart(plots.points_figure(X, categories=cats, title="D and D′ differ in one row",
                                        opacity=0.9), key="tour_fig_nb", width="stretch")
    st.caption(f"Chart: {len(X)} points; the one person who differs (row {who}) is at "
               f"({X[who, 0]:.3g}, {X[who, 1]:.3g}), the {len(X) - 1} others are in both D and "
               "D′.")
elif step == STEPS[2]:
    c1, c2 = st.columns(2)
    eps = c1.slider("ε", 0.05, 5.0, 0.5, 0.05, key="tour_eps_count")
    true = number_field(c2, "true count", "tour_count",
                        lambda v: check_count("true count", v, 0, 10_000), 120)
    draws = true + laplace(1.0 / eps, size=2000, rng=rng_seed)
    st.write(
        "The simplest private release: count people, then add **Laplace noise** of scale 1/ε "
        "(one person changes a count by at most 1). The histogram shows 2,000 possible releases: "
        f"about 95 % fall within ±{3.0 / eps:.3g} of the true count {true}. Smaller ε, wider "
        "spread.")
    _chart(plots.histogram(draws, title="2,000 noisy releases of one count",
                                    x_title="released count"), key="tour_fig_count",
                    width="stretch")
    st.caption(histogram_summary(draws, f"noisy releases of the true count {true}"))
elif step == STEPS[3]:
    c1, c2 = st.columns(2)
    eps = c1.slider("ε of the algorithm on the sample", 0.1, 5.0, 2.0, 0.1, key="tour_eps_s")
    q = c2.slider("probability q of keeping each row", 0.01, 1.0, 0.1, 0.01, key="tour_q")
    st.write(
        "If each row is kept in a random sample with probability q and only the sample is used, "
        "an attacker does not even know whether your row was looked at. That **amplifies** "
        "privacy: an ε-private algorithm on the sample is about q·ε-private for the full data "
        "when q is small. Importance sampling uses this row by row.")
    _chart(plots.amplification_figure(eps, q), key="tour_fig_amp", width="stretch")
    st.caption(amplification_summary(eps, q))
elif step == STEPS[4]:
    X, far = _core_points()
    r = st.slider("friend radius r", 0.5, 12.0, 3.0, 0.5, key="tour_r")
    kept = friend_counts(X, r) > len(X) / 2
    n_kept, n_far = int(kept.sum()), int(far.sum())
    far_removed = int((far & ~kept).sum())
    st.write(
        "Two points are **friends** when they are at most r apart. FriendlyCore keeps the points "
        "that are friends with more than half of the data (with a noisy threshold in the real "
        "algorithm) and drops the rest. On the kept **core** no single point can be far from the "
        "others, so averaging it needs much less noise. "
        f"Here {n_kept} of {len(X)} points are kept and {len(X) - n_kept} removed; "
        f"{far_removed} of the {n_far} far-away points are among the removed. "
        + _core_sentence(n_kept, len(X), far_removed, n_far))
    fig = plots.points_figure(X, categories=np.where(kept, "kept", "removed"),
                              title=f"Friendly core at r = {r:g} (no noise: teaching view)",
                              opacity=0.8)
    _chart(fig, key="tour_fig_fc", width="stretch")
    st.caption(kept_removed_summary(n_kept, len(X)))
else:
    X = _demo_points()
    c1, c2 = st.columns(2)
    eps = c1.slider("ε", 0.05, 5.0, 1.0, 0.05, key="tour_eps_km")
    k = c2.slider("k", 1, 6, 3, key="tour_k")
    est = DPLloyd(k, epsilon=eps, radius=13.0, n_iter=5, rng=rng_seed).fit(X)
    st.write(
        "Private **k-means** (DP-Lloyd): each round assigns points to their nearest centre and "
        "moves every centre to the noisy mean of its points; the noise hides any one point. "
        "With a small ε or a large k each cluster's mean gets too much noise and the centres "
        "wander; with more data or a larger ε they settle on the clusters.")
    fig = plots.centers_figure(X, {"DP-Lloyd centres": est.cluster_centers_},
                               title=f"DP-Lloyd, k = {k}, ε = {eps:g} ({est.privacy_})")
    _chart(fig, key="tour_fig_km", width="stretch")
    st.caption(centres_summary({"DP-Lloyd": est.cluster_centers_}))

i = STEPS.index(step)


def _go(to: str) -> None:
    st.session_state["tour_step"] = to


if i + 1 < len(STEPS):
    st.button(f"Next: {STEPS[i + 1]}", key="tour_next", on_click=_go, args=(STEPS[i + 1],),
              type="primary", icon=":material/arrow_forward:")
else:
    st.caption("That is the tour. The other pages run the same algorithms on real data.")
