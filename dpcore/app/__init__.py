"""The app model behind the dashboard, without Streamlit: sweeps, advice, plots, URL state, export.
"""
