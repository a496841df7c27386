"""One colour per method, shared by the dashboard's figures and the four reproduction reports."""

from __future__ import annotations

import hashlib

__all__ = ["METHOD_COLORS", "method_color"]

#: One colour per method, shared by all four reports and the dashboard (colour-blind safe
#: Okabe–Ito first). Methods the dashboard also draws must keep distinct colours (max-cover and
#: FriendlyCore k-means appear in one comparison there).
METHOD_COLORS: dict[str, str] = {
    # importance sampling (the paper's own palette, prior_art §1)
    "unif": "#0072B2", "core": "#009E73", "opt": "#E69F00", "full": "#555555",
    # FriendlyCore
    "FC_Avg": "#D55E00", "FC_Clustering": "#D55E00", "FC_Clustering (PCA oracle)": "#D55E00",
    "CoinPress t=2": "#56B4E9", "CoinPress t=4": "#0072B2", "CoinPress t=8": "#332288",
    "CoinPress t=20": "#117733", "CoinPress t=40": "#44AA99",
    "KV18": "#CC79A7", "Gaussian (ball R+√d+3)": "#999933", "non-private mean": "#000000",
    "LSH_Clustering ε=2": "#AA4499",
    "DPLloyd ε=2": "#882255", "DPLloyd ε=1.41": "#DDCC77",
    # max-cover
    "dpkmeans": "#0072B2", "maxcover": "#4477AA", "dplloyd": "#882255", "diffprivlib": "#999933",
    "lloyd": "#000000",
    "one centre (mean)": "#777777", "balcan": "#CC79A7",
    # sensitivity sampler
    "sampler": "#009E73", "global": "#0072B2", "non-private": "#000000",
    "sampled": "#009E73", "analytic": "#0072B2",
}
_PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
            "#332288", "#117733", "#44AA99", "#88CCEE", "#AA4499")


def method_color(name: str) -> str:
    """The fixed colour of a method (a stable hash into the palette for names not listed)."""
    if name in METHOD_COLORS:
        return METHOD_COLORS[name]
    digest = hashlib.sha256(name.encode()).digest()[0]
    return _PALETTE[digest % len(_PALETTE)]
