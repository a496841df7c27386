"""Data larger than one machine: importance sampling and DP-Lloyd on Dask (:mod:`.dask_kmeans`).
"""
