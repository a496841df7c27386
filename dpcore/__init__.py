"""dpcore: differentially private clustering and aggregation.

The computation layer of the dashboard: importance-sampled DP k-means (``dpcore.lloyd``,
``dpcore.importance``), FriendlyCore (``dpcore.friendlycore``), max-cover k-means
(``dpcore.maxcover``) and the sensitivity sampler (``dpcore.sensitivity``), on shared primitives
(``dpcore.privacy``, ``dpcore.noise``, ``dpcore.data``, ``dpcore.rng``). No Streamlit here.
"""

__version__ = "0.1.0"
