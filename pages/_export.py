"""Download buttons for a result's configuration: JSON, a runnable Python script, a notebook."""

from __future__ import annotations

import streamlit as st

from dpcore.app.export import notebook, python_script
from pages._common import download_config, is_release_mode


def _description(config: dict) -> dict | None:
    """The public description (bounds, scaling) of the data set the configuration ran on."""
    for sp in st.session_state.get("data_specs", {}).values():
        desc = sp.get("public_description")
        if desc and desc["columns"] == config["data"]["columns"]:
            return desc
    return None


def export_buttons(config: dict, key: str) -> None:
    """JSON configuration, Python script and Jupyter notebook that reproduce the result.

    Explore mode only: a configuration holds its seed, and a release's seed hands its noise to
    the analyst (release mode exports the seedless release request of ``pages/_release.py``).
    """
    if is_release_mode():
        return
    desc = _description(config)
    name = f"{config['mechanism']}_seed{config['seed']}"
    # a wrapping row, not fixed columns: at 1024 px three columns cut "Run configuration (…"
    with st.container(horizontal=True):
        download_config(config, key)
        st.download_button("Python script", lambda: python_script(config, description=desc),
                           file_name=f"{name}.py", mime="text/x-python", key=f"{key}_py",
                           on_click="ignore", icon=":material/code:",
                           help="Reproduces this result with dpcore: python FILE [DATA_FILE].")
        st.download_button("Notebook", lambda: notebook(config, description=desc),
                           file_name=f"{name}.ipynb", mime="application/x-ipynb+json",
                           key=f"{key}_nb", on_click="ignore", icon=":material/book:",
                           help="The same code as a Jupyter notebook.")
