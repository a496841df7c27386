"""Primitives: errors, randomness, threads, cancellation, compiled kernels, text safety.

The bottom layer. Nothing here knows about privacy, data tables or mechanisms.
"""
