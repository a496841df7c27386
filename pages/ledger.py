"""Ledger page: every release of this session, composed totals, remaining budget, export, reset."""

from __future__ import annotations

import json

import streamlit as st

from dpcore import plots
from pages._common import init_state, is_release_mode, ledger, show

init_state()
st.title("Privacy ledger")
led = ledger()
st.caption("Every release made in release mode since the app was opened, with its guarantee and "
           "parameters. Releases compose sequentially; a release that would take the total over "
           "the budget is refused and nothing is recorded.")
if not is_release_mode():
    st.info("Explore mode records nothing: its views treat the data as public. Switch the sidebar "
            "to release mode to make (and record) private releases.")

total, remaining = led.total(), led.remaining()
c1, c2, c3 = st.columns(3)
c1.metric("ε budget", f"{led.budget.epsilon:.4g}")
c2.metric("ε spent (composed)", f"{total.epsilon:.4g}")
c3.metric("ε remaining", f"{remaining.epsilon:.4g}")
st.markdown(f"**Budget** {led.budget} · **spent** {total} · **remaining** {remaining}")
show(plots.budget_bar(led.budget.epsilon - remaining.epsilon, led.budget.epsilon), "ledger_bar")

if len(led):
    frame = led.to_frame()
    st.dataframe(frame.drop(columns=[c for c in frame if frame[c].isna().all()]),
                 hide_index=True)
else:
    st.write("No release recorded yet.")

c1, c2 = st.columns(2)
with c1:
    st.download_button("Ledger (JSON)", led.to_json(), file_name="privacy_ledger.json",
                       mime="application/json", key="ledger_json", on_click="ignore",
                       icon=":material/download:")
with c2:
    confirm = st.checkbox("I understand that resetting forgets the record, not the releases",
                          key="ledger_reset_confirm")
    if st.button("Reset ledger", key="ledger_reset", disabled=not confirm):
        led.reset()
        st.session_state["ledger_reset_done"] = True
        st.rerun()
if st.session_state.pop("ledger_reset_done", False):
    st.success("Ledger reset. The total budget can be changed in the sidebar again.")

with st.expander("What the ledger composes"):
    st.markdown(
        "- ε and δ add (basic sequential composition).\n"
        "- zCDP releases (FriendlyCore) add their ρ and are converted once to (ε, δ) with the "
        "δ the budget has left.\n"
        "- Random-DP releases (sensitivity sampler) add γ by the union bound; they need γ > 0 "
        "in the total budget.")
    st.code(json.dumps(json.loads(led.to_json()), indent=2)[:4000], language="json")
