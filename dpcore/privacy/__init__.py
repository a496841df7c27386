"""Privacy: guarantees and their composition, noise samplers, the lasting ledger, auditing.

This package's namespace is the public contract ``from dpcore.privacy import PureDP, ...``; the
guarantee types live in :mod:`dpcore.privacy.guarantees`.
"""

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    Guarantee,
    LedgerEntry,
    PrivacyLeakWarning,
    PrivacyLedger,
    PureDP,
    RandomDP,
    compose,
    guarantee_from_dict,
    zcdp_to_epsilon,
)

__all__ = [
    'ApproxDP',
    'BudgetExceededError',
    'Guarantee',
    'LedgerEntry',
    'PrivacyLeakWarning',
    'PrivacyLedger',
    'PureDP',
    'RandomDP',
    'ZCDP',
    'compose',
    'guarantee_from_dict',
    'zcdp_to_epsilon',
]
