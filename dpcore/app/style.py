"""One colour per method, shared by the dashboard's figures and the four reproduction reports."""

from __future__ import annotations

import hashlib

__all__ = ["METHOD_COLORS", "TEXT_COLOR", "contrast_ratio", "legible", "method_color"]

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


#: Chart text (axis titles, ticks, legends): Streamlit's body text colour, 12.6:1 on white. The
#: Streamlit plotly theme's grey ticks were 3.72:1 (WCAG 2.1 §1.4.3 asks ≥ 4.5:1, issue 27.6).
TEXT_COLOR = "#31333F"
#: Font sizes legible on a projector at 1024 × 768 (points).
TICK_SIZE, LABEL_SIZE = 14, 15


def _luminance(hex_color: str) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour ``#rrggbb``."""
    rgb = [int(hex_color.lstrip("#")[i:i + 2], 16) / 255.0 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(foreground: str, background: str = "#ffffff") -> float:
    """WCAG 2.1 contrast ratio (L₁ + 0.05) / (L₂ + 0.05), lighter over darker."""
    a, b = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def legible(fig):
    """Dark chart text at projector sizes (axis titles, ticks, legend, colour bars).

    Set on the figure itself, so it wins over the Streamlit theme's template. Returns ``fig``.
    """
    font = {"color": TEXT_COLOR, "size": LABEL_SIZE}
    fig.update_layout(font=font, legend_font={"color": TEXT_COLOR, "size": TICK_SIZE},
                      title_font={"color": TEXT_COLOR})
    fig.update_xaxes(tickfont={"color": TEXT_COLOR, "size": TICK_SIZE},
                     title_font={"color": TEXT_COLOR, "size": LABEL_SIZE})
    fig.update_yaxes(tickfont={"color": TEXT_COLOR, "size": TICK_SIZE},
                     title_font={"color": TEXT_COLOR, "size": LABEL_SIZE})
    legend = fig.layout.legend
    if legend.orientation == "h" and legend.y is not None and -0.22 < legend.y < 0:
        # at these sizes a legend 15 % below the plot sat on the x-axis title (1024 px shots)
        fig.update_layout(legend_y=-0.22)
    return fig
