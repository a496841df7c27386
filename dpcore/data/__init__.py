"""Data: tables to float matrices, input limits, parameter constraints (:mod:`.params`), the
estimators' scikit-learn base (:mod:`.base`), geometry kernels, bundled data sets.

This package's namespace re-exports :mod:`dpcore.data.tables` (``from dpcore.data import
to_matrix``).
"""

from dpcore.data.tables import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_COLUMNS,
    MAX_UPLOAD_MIB,
    DataError,
    center,
    clip_rows,
    column_problem,
    column_report,
    data_radius,
    drop_outside,
    load_matrix,
    load_table,
    numeric_columns,
    to_matrix,
)

__all__ = [
    'DEFAULT_MAX_BYTES',
    'DEFAULT_MAX_COLUMNS',
    'MAX_UPLOAD_MIB',
    'DataError',
    'center',
    'clip_rows',
    'column_problem',
    'column_report',
    'data_radius',
    'drop_outside',
    'load_matrix',
    'load_table',
    'numeric_columns',
    'to_matrix',
]
