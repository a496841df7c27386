"""Privacy game (issue 25.3): the class plays the adversary against one DP release.

Two neighbouring tables (the data set D and D′ = D plus one student's row), a coin flip, the
project's ε-DP row count of the chosen table; students guess which table it was. The running
guess rate is drawn against the e^ε/(1+e^ε) bound with its 95 % band, next to the empirical ε
that the project's audit proves from draws of the same mechanism (:mod:`dpcore.app.game`).
Explore mode only; the page is not in a curator deployment's navigation (app.py).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.app import game, plots
from dpcore.app.summaries import game_summary
from pages._common import init_state, is_release_mode, require_dataset, show, view_seed

init_state()
ss = st.session_state
st.title("Privacy game: was the student in the data?")
if is_release_mode():  # the game shows the true n: explore mode only
    st.info("The privacy game runs in explore mode only (it shows the true number of rows). "
            "Switch the sidebar's Mode to **explore** to play.")
    st.stop()
ds = require_dataset()
eps = float(ss["eps"])
n = int(ds.n)
seed = view_seed("game")
key = (ds.fp, eps, seed)
state = ss.get("game_state")
if state is None or state["key"] != key:  # a new data set, ε or seed starts a new game
    state = ss["game_state"] = {"key": key, "secrets": [], "guesses": [], "releases": []}


def _round(i: int) -> game.Round:
    """Round i's coin and release (seeded by the page's seed and the round: a shared URL
    replays the same game)."""
    return game.play_round(n, eps, np.random.default_rng((seed, i)))


def _guess(choice: int) -> None:
    r = _round(len(state["guesses"]))
    state["secrets"].append(r.secret)
    state["releases"].append(r.released)
    state["guesses"].append(int(choice))


def _computer(rounds: int) -> None:
    for _ in range(rounds):
        _guess(game.optimal_guess(_round(len(state["guesses"])).released, n))


def _reset() -> None:
    state.update(secrets=[], guesses=[], releases=[])


st.write(
    f"The app holds two tables that differ in **one student's row**: **D**, the data set "
    f"without the student ({n:,} rows), and **D′**, with the student ({n + 1:,} rows). Each "
    f"round it flips a coin, picks one of them and releases its row count with ε = {eps:g} "
    "(the project's differentially private count: the true count plus Laplace noise of scale "
    "1/ε, rounded). Guess which table it was.")
current = _round(len(state["guesses"]))
c1, c2 = st.columns([2, 3])
c1.metric(f"Released count, round {len(state['guesses']) + 1}", f"{current.released:,}")
c2.markdown(f"D has **{n:,}** rows, D′ has **{n + 1:,}** rows.")
buttons = st.container(horizontal=True)  # wraps at 1024 px instead of cutting labels
buttons.button("It was D (without)", key="game_guess_0", on_click=_guess, args=(0,),
          help="Guess: the count came from D, without the student's row.")
buttons.button("It was D′ (with)", key="game_guess_1", on_click=_guess, args=(1,),
          help="Guess: the count came from D′, with the student's row.")
buttons.button("Autoplay 100 · < 1 s", key="game_auto", on_click=_computer,
          args=(100,),
          help="The computer plays 100 rounds as the best possible guesser: the "
               f"likelihood-ratio test (D′ when the release is at least {n + 1:,}).")

played = len(state["guesses"])
correct = np.asarray(state["guesses"]) == np.asarray(state["secrets"])
if played:
    last = "D′" if state["secrets"][-1] else "D"
    said = "D′" if state["guesses"][-1] else "D"
    verdict = "right" if correct[-1] else "wrong"
    st.caption(f"Round {played}: the count {state['releases'][-1]:,} came from **{last}**; the "
               f"guess was {said} ({verdict}).")
bound = game.bound(eps)
lo, hi = game.bound_band(eps, max(played, 1))
m1, m2, m3 = st.columns(3)
m1.metric("Rounds played", f"{played}")
m2.metric("Guess rate", f"{correct.mean():.3f}" if played else "–")
m3.metric("Bound e^ε/(1+e^ε)", f"{bound:.3f}")
show(plots.game_figure(correct.tolist(), eps, optimal=game.optimal_rate(eps)), "game_fig")
st.caption(game_summary(played, int(correct.sum()), bound, lo, hi))
st.write(
    f"**What it means.** Whatever strategy you use, ε = {eps:g} caps the share of right "
    f"guesses at {bound:.3f} in the long run; a coin flip gets 0.5. The best strategy for this "
    f"count (guess D′ when the count is at least {n + 1:,}) gets {game.optimal_rate(eps):.3f}. "
    "Try a smaller ε in the sidebar: the bound moves towards 0.5 and nobody can tell whether "
    "the student took part.")


@st.cache_data(show_spinner="Auditing the mechanism…", max_entries=32)
def _audit(n_rows: int, epsilon: float, audit_seed: int) -> tuple[float, str]:
    res = game.audit_count(n_rows, epsilon, rng=audit_seed)
    return res.epsilon_lower, str(res)


eps_lower, detail = _audit(n, eps, seed)
st.metric("Empirical ε of the count (audit, 95 % confidence lower bound)", f"{eps_lower:.3f}",
          help=detail)
st.caption(f"The project's privacy audit (dpcore.privacy.audit) ran the count 20,000 times on "
           f"each of D and D′ and found the most telling event: it proves ε ≥ {eps_lower:.3f} "
           f"for the mechanism as implemented, against the claimed ε = {eps:g} (an audit can "
           "catch a mechanism that leaks more than it claims; it cannot prove it private).")
st.button("New game", key="game_reset", on_click=_reset, icon=":material/restart_alt:")
