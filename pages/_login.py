"""The login of a curator deployment (issue 22 item 5): named analysts, each with their share.

``app.py`` calls :func:`login_gate` before the navigation and the sidebar: until an analyst has
logged in, a curator deployment shows the login form and nothing of the data set (no page, no
sidebar, no column name, no budget; n is never shown anywhere). Two ways in:

* **OpenID Connect** (Streamlit's ``st.login``) when the curator configured an ``[auth]`` section
  in ``.streamlit/secrets.toml``: the identity's e-mail must be an analyst the curator granted
  (``dpcore ledger grant alice@example.org --dataset NAME --epsilon E``).
* Otherwise a **name and token** the curator issued with ``dpcore ledger grant``. A wrong pair
  gets one message whether or not the name exists (:data:`LOGIN_REFUSED`). The form clears on
  submit; the token is never shown back, logged, put in the URL or kept: the session keeps only
  the analyst's name, so a reload (a new session) asks again.

Each session then releases through its own copy of the deployment's door whose ledger spends as
that analyst (:meth:`~dpcore.privacy.ledger.LastingLedger.as_analyst`): the ledger records who
spent what, and one analyst cannot spend another's share. A grant revoked meanwhile logs the
session out on its next run.
"""

from __future__ import annotations

import copy
import sys

import streamlit as st

from dpcore.core.errors import LedgerError
from dpcore.core.text import md_text
from dpcore.privacy.ledger_analysts import LOGIN_REFUSED, LoginRefused
from dpcore.privacy.ledger_file import public_reason

#: Session-state key of the logged-in analyst's name (server side; never in the URL).
ANALYST = "_dpcore_analyst"
_DOOR = "_dpcore_analyst_door"
_REFUSED = "_dpcore_login_refused"


def oidc_configured() -> bool:
    """Whether the curator configured Streamlit's authentication (``[auth]`` in secrets.toml)."""
    try:
        return bool(st.secrets.load_if_toml_exists()) and "auth" in st.secrets
    except Exception:  # an unreadable secrets file: the token login, never an open door
        return False


def ledger_message(exc: BaseException) -> str:
    """What an analyst is told when the ledger cannot be used: its kind, no path."""
    return (f"The privacy ledger cannot be used: {public_reason(exc)}. Nothing was released or "
            "charged. The curator sees the details in the server log.")


def _shared_door(dep):
    """The deployment's door (one per server, :func:`pages._common._curator_door`), checked
    against its ledger file on every run; None with the message shown when it cannot be used."""
    import os

    from dpcore.release.curator import ENV
    from pages._common import _curator_door

    try:
        door = _curator_door(str(dep.data), str(dep.schema), os.environ[ENV["budget"]],
                             str(dep.ledger_dir or ""), dep.dataset, dep.allow_random_dp)
        door.ledger.verify()  # a ledger moved, replaced or edited since: refuse, every time
        return door
    except Exception as exc:  # the reason (paths) goes to the curator's terminal
        print(f"dpcore: the private data set cannot be opened: {exc}", file=sys.stderr)
        if isinstance(exc, LedgerError):
            st.error(ledger_message(exc))
        else:
            st.error("The private data set cannot be opened; the curator sees why in the "
                     "server log.")
        return None


def analyst_door(dep):
    """This session's door: the deployment's, spending as the logged-in analyst (or None)."""
    door = _shared_door(dep)
    name = st.session_state.get(ANALYST)
    if door is None or name is None:
        return None
    try:
        led = door.ledger.as_analyst(name)  # every run: a grant revoked since logs them out
    except (LoginRefused, LedgerError):
        for key in (ANALYST, _DOOR):
            st.session_state.pop(key, None)
        return None
    mine = st.session_state.get(_DOOR)
    if mine is None or mine[0] is not door or mine[1] != name:
        own = copy.copy(door)  # shares the table, not the ledger's analyst
        own.ledger = led
        mine = (door, name, own)
        st.session_state[_DOOR] = mine
    return mine[2]


def _logout() -> None:
    for key in (ANALYST, _DOOR, _REFUSED):
        st.session_state.pop(key, None)
    if oidc_configured():
        st.logout()


def _token_form(door) -> None:
    st.markdown("Log in with the analyst name and token your data curator gave you "
                "(`dpcore ledger grant`).")
    with st.form("dpcore_login", clear_on_submit=True):
        name = st.text_input("Analyst name", key="login_name", autocomplete="username")
        token = st.text_input("Token", type="password", key="login_token",
                              autocomplete="current-password")
        submitted = st.form_submit_button("Log in", type="primary", key="login_submit")
    if submitted:
        try:
            st.session_state[ANALYST] = door.ledger.login(name, token)
            st.session_state.pop(_REFUSED, None)
        except LoginRefused:
            st.session_state[_REFUSED] = LOGIN_REFUSED
        except LedgerError as exc:
            print(f"dpcore: login: the ledger cannot be used: {exc}", file=sys.stderr)
            st.session_state[_REFUSED] = ledger_message(exc)
        del token
        st.rerun()
    refused = st.session_state.get(_REFUSED)
    if refused:
        st.error(refused)


def _oidc(door) -> None:
    if not st.user.is_logged_in:
        st.markdown("Log in with your organisation's account; the curator grants each analyst "
                    "a share of this data set's budget.")
        st.button("Log in", type="primary", on_click=st.login)
        return
    email = str(st.user.get("email") or "")
    try:
        st.session_state[ANALYST] = door.ledger.as_analyst(email).analyst
        st.rerun()
    except LoginRefused:
        st.error(f"{md_text(email)} has no share of this data set's budget: ask the curator "
                 "to grant one (`dpcore ledger grant EMAIL`).")
        st.button("Log out", on_click=st.logout)


def login_gate() -> bool:
    """Whether the session may see the app: always outside a curator deployment; in one, once
    an analyst logged in (else the login form is drawn here; the caller stops)."""
    from pages._common import curator

    dep = curator()
    if dep is None:
        return True
    door = _shared_door(dep)
    if door is None:
        return False
    if st.session_state.get(ANALYST) is not None and analyst_door(dep) is not None:
        with st.sidebar:
            st.caption(f"Logged in as analyst **{md_text(st.session_state[ANALYST])}**.")
            st.button("Log out", key="dpcore_logout", on_click=_logout,
                      icon=":material/logout:")
        return True
    st.title("Private data set")
    st.caption("A curator deployment: only named analysts may release from this data set.")
    if oidc_configured():
        _oidc(door)
    else:
        _token_form(door)
    return False
