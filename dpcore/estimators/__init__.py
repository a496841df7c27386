"""The recommended estimators, built from the mechanisms below (DPKMeans).
"""

from dpcore.estimators.dpkmeans import (
    SEEDINGS,
    DPKMeans,
)

__all__ = [
    'SEEDINGS',
    'DPKMeans',
]
