"""Tests written from the surviving mutants of the lasting ledger (``make mutate MUTATE=ledger``:
``dpcore/privacy/ledger*.py``), one per plausible bug a survivor stood for. Each docstring names
the mutants (function and what the mutation changes; the run's numbers are in
``docs/testing.md``) and the bug. Checked against the mutants with mutmut's MUTANT_UNDER_TEST in
the run's ``.mutate/ledger/mutants`` copy."""

from __future__ import annotations

import errno

import pytest

from dpcore.privacy import ledger_file as lf


@pytest.mark.parametrize("code, reason", [
    (errno.ENOSPC, "full"), (errno.EDQUOT, "full"), (errno.EROFS, "readonly"),
    (errno.EACCES, "readonly"), (errno.EPERM, "readonly"), (errno.EISDIR, "directory"),
    (None, "other"), (errno.ENOENT, "other")])
def test_every_os_error_has_its_public_reason(code, reason):
    """Mutants of ``_os_reason``: a reason's text changed (``'XXfullXX'``, ``'READONLY'``; the
    public reason then falls back to "its file cannot be used") or ``exc.errno or 0`` → ``or 1``
    (an OSError without errno read as EPERM: "read-only"). Bug: the analyst is told the wrong
    kind of failure (a full quota as an unusable file, a failure of unknown cause as a
    read-only file)."""
    exc = OSError(code, "x") if code is not None else OSError("no errno")
    assert lf._os_reason(exc) == reason
    assert lf.public_reason(lf._failure(lf.LedgerError, "t", lf._os_reason(exc))) == \
        lf._REASONS[reason]
