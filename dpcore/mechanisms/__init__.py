"""The mechanisms of the four papers and their baselines, one subpackage per paper.

importance (paper 000/001) -> lloyd (weighted DP-Lloyd) -> friendlycore (002), maxcover (003);
sensitivity (004); baselines (the papers' comparison methods); bounds (private estimates of the
public inputs). See docs/architecture.md.
"""
