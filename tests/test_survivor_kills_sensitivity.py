"""Tests written from the survivors of ``make mutate``'s sensitivity module (tools/mutate.py).

Each test names the mutants it kills (mutmut's names, ``<function>__mutmut_<n>``) and the plausible
bug it stands for; survivors argued equivalent are in tools/survivors.py and docs/testing.md.
"""

from __future__ import annotations
