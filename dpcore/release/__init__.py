"""Release: the mechanism registry, the release door, run configurations, the curator deployment.

Everything that decides what may leave a private table lives here; pages only display.
"""
