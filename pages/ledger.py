"""Ledger page: the lasting ledger of the data set in use (release mode), and what it composes."""

from __future__ import annotations

import streamlit as st

from dpcore.privacy.guarantees import RANDOM_DP_CAVEAT
from pages._common import curator, init_state, is_release_mode, ledger
from pages._release import door_or_stop, ledger_release_view

init_state()
st.title("Privacy ledger")
st.caption("Every release of this data set, in every session: its guarantee and public "
           "parameters. Releases compose sequentially; a release that would take the total over "
           "the budget is refused before it is computed, and nothing is recorded.")
if not is_release_mode():
    st.info("Explore mode records nothing: its views treat the data as public. Switch the sidebar "
            "to release mode to make (and record) private releases.")
    st.stop()

door_or_stop()
ledger_release_view(curator=curator() is not None)
if curator() is None:  # the analyst is their own curator here; never in a curator deployment
    confirm = st.checkbox("I understand that resetting forgets the record, not the releases",
                          key="ledger_reset_confirm")
    if st.button("Reset ledger", key="ledger_reset", disabled=not confirm):
        ledger().reset()
        st.session_state["ledger_reset_done"] = True
        st.rerun()
    if st.session_state.pop("ledger_reset_done", False):
        st.success("Ledger reset. The total budget can be changed in the sidebar again.")

with st.expander("What the ledger composes"):
    st.markdown(
        "- **DP account.** Basic composition: ε and δ add; zCDP releases (FriendlyCore, KV18) "
        "add their ρ and are converted once to (ε, δ) with the δ the budget has left.\n"
        "- **Tight total.** Each release's parts (DP-Lloyd's rounds, FriendlyCore's zCDP "
        "steps) are composed in Rényi DP (Google's dp-accounting) at fixed orders, a filter "
        "that stays valid when you choose each release after seeing the last. A curator "
        "deployment refuses a release when the tight total would exceed the budget; elsewhere "
        "only when both totals would.\n"
        "- **Random-DP account.** Random-DP releases (sensitivity sampler) never enter the DP "
        "account; they add γ by the union bound and need γ > 0 in the total budget (and, in a "
        "curator deployment, the curator's `--random-dp`). " + RANDOM_DP_CAVEAT + "\n"
        "- **Named analysts** (curator deployments): each spends from the share the curator "
        "granted; the table of totals shows the data set's and your share's, and the entries "
        "below are your own releases. Released outputs are kept with their entries, so a "
        "reload shows them again.\n"
        "- The ledger lasts (SQLite, `DPCORE_LEDGER_DIR`): a reload, a second tab or a server "
        "restart sees the same remaining budget; its file is checked by a hash chain on every "
        "read, and a file moved, replaced or edited is refused.")
