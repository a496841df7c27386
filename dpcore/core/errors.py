"""Every exception and warning dpcore raises, in one place.

Each is also importable from the module that raises it (e.g. ``dpcore.privacy.BudgetExceededError``,
``dpcore.data.DataError``). All refusals of bad input are :class:`ValueError` subclasses, so a
caller can catch "the input was wrong" without knowing which layer said so.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "CLIError",
    "DataError",
    "LedgerError",
    "LedgerIntegrityError",
    "ParameterError",
    "PartitionError",
    "PrivacyLeakWarning",
    "ReleaseRefused",
    "SamplerError",
    "ScaleError",
    "SchemaError",
]


class PrivacyLeakWarning(UserWarning):
    """A parameter the privacy proof assumes public was read off the private data."""


class BudgetExceededError(ValueError):
    """A release would take the ledger over its budget; nothing was recorded."""


class LedgerError(ValueError):
    """The lasting ledger's file cannot be used (missing, read-only, not a ledger); nothing was
    recorded. The message names the file: it is for the curator, not for analysts."""


class LedgerIntegrityError(LedgerError):
    """The ledger's file was moved, replaced or edited outside dpcore: its integrity chain (or
    the chain head kept beside it) no longer matches. The ledger refuses to start."""


class ParameterError(ValueError):
    """A parameter outside its documented range; ``parameter`` names it."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter


class DataError(ValueError):
    """The input table cannot be used; the message says why and what would work."""


class SchemaError(ValueError):
    """A public description that cannot be used (names the offending field)."""


class SamplerError(ValueError):
    """The sampler cannot produce a trustworthy sensitivity estimate (nothing is released)."""


class ReleaseRefused(ValueError):
    """A release refused before anything was charged or computed (a public reason)."""


class ScaleError(RuntimeError):
    """The distributed computation did not complete; no (partial) result is returned."""


class PartitionError(ValueError):
    """Bad values in one partition; the driver names the file it came from.

    ``args = (message, partition index)``; picklable, so it crosses a distributed cluster.
    """

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message, index)
        self.message, self.index = message, index

    def __str__(self) -> str:
        return f"partition {self.index}: {self.message}"


class CLIError(ValueError):
    """Bad command-line input: printed as one line, exit status 2."""
