"""Classify the survivors of ``make mutate`` (``.mutate/report.json``) for docs/testing.md.

Every survivor gets one class, by a rule on its diff or by the reviewed table :data:`REVIEWED`
(per module, with the argument). What no rule and no table entry covers is printed as **not
triaged**: the review is honest about it.

A table entry is keyed either by :class:`At` (the mutated function and a regular expression on
the mutant's diff line: it survives code changes, which renumber mutmut's mutants) or, in older
entries, by a regular expression on the mutant's short name (``…__mutmut_<n>``; the number
shifts when the function changes, so such an entry must be re-keyed when its module is re-run).

    python tools/survivors.py            # markdown, every module of the report
    python tools/survivors.py noise door
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]

#: class -> the argument printed once per class
CLASSES = {
    "sql": "equivalent: SQLite keywords and identifiers are case-insensitive",
    "message": "accepted, not equivalent: the wording of an error or warning message (the tests "
               "pin the exception type and the name or fact it starts with, not every word)",
    "dtype": "equivalent on the documented inputs: numeric arrays are float64 either way, or "
             "numpy converts them at the next operation",
    "strict": "equivalent: the zipped sequences have equal lengths by construction",
    "killed": "killed by a test written after this run (tests/test_survivor_kills_*.py, each "
              "checked against its mutant with MUTANT_UNDER_TEST in the run's mutants/ copy); "
              "the next run counts them as detected",
    "reviewed": "argued below, one by one",
    "not triaged": "not reviewed in this round",
    "not checked": "the run did not reach it (stopped at its time limit, or outside --only): no "
                   "rule is applied to a mutant no test was run against",
}

_STR = re.compile(r"""(?:[rbuf]*)("([^"\\]|\\.)*"|'([^'\\]|\\.)*')""", re.IGNORECASE)


class At(NamedTuple):
    """A survivor key that outlives renumbering: ``function`` (a regular expression matched in
    full against the mutated function's name as written in the source, ``Class.method`` or
    ``function``) and ``diff`` (a regular expression searched in ``"<old line> → <new line>"``,
    the mutant's diff as ``tools/mutate.py`` records it)."""

    function: str
    diff: str


def function_of(short: str) -> str:
    """The source name of a mutant's function: ``xǁCǁm__mutmut_3`` → ``C.m``,
    ``x_f__mutmut_3`` → ``f``."""
    name = re.sub(r"__mutmut_\d+$", "", short)
    if name.startswith("xǁ"):
        return name[2:].replace("ǁ", ".")
    return name[2:] if name.startswith("x_") else name


def _matches(key: str | At, short: str, old: str, new: str) -> bool:
    if isinstance(key, At):
        return bool(re.fullmatch(key.function, function_of(short))
                    and re.search(key.diff, f"{old} → {new}"))
    return bool(re.search(key, short))


#: module -> [key (At, or a regex on the short name)] of survivors killed by a test written after
#: the last run (empty it for a module when `make mutate` is re-run on it: they are then detected)
KILLED: dict[str, list[str | At]] = {
    # guarantees: re-run at 18:49 with tests/test_survivor_kills_guarantees.py, whose 63 kills
    # of the 18:06 run it detected (but privacy_alias's, see REVIEWED)
    "guarantees": [],
    "noise": [
        r"_discrete_laplace_scale__mutmut_[3578]$",
        r"x_defended_noise__mutmut_(5|6|8|9|10)$",
        r"NoiseDefenceǁdelivered__mutmut_4$",
        r"add_discrete_laplace__mutmut_24$",
    ],
    # re-run at 19:02 (detects the 18:38 run's kill); then tests/test_survivor_kills_friendlycore
    # .py's seeded-n̂ test (the mutant was detected by chance in the 18:38 run, not in this one)
    "friendlycore_filters": [At(r"friendly_core", r"filt_delta, rng=None\)")],
    # tests/test_survivor_kills_ledger.py (run of 2026-11-26 on ledger*.py, stopped at 1294 /
    # 2780); each regex names a function and the mutants its test kills
    "ledger": [
        r"x__os_reason__mutmut_(7|8|1[1-68])$",
        r"LastingLedgerǁhistory__mutmut_\d+$",
        r"ReleasedOutputsǁlast_group__mutmut_[2489]$",
        r"LastingLedgerǁdisplay_name__mutmut_[2-8]$",
        r"AnalystSharesǁ_analyst_ledger__mutmut_([1-4]|[89]|1[0-38])$",
        r"AnalystSharesǁshare_accounts__mutmut_(9|1[157]|2[0-9]|3[0-37]|4[0368]|5[1-9]|6[0-8])$",
        r"AnalystSharesǁgrant__mutmut_([3467]|1[01]|21|3[4589]|4[0-369]|54)$",
        r"AnalystSharesǁas_analyst__mutmut_2$",
        r"x__subtract__mutmut_(7|8|13|14)$",
        r"LastingLedgerǁspend_and_store__mutmut_(2[012679]|50|59)$",
        r"ReleasedOutputsǁrecords__mutmut_(28|3[4-689]|4[03-7]|5[568]|60|74|8[568])$",
        r"x__sqlite_error__mutmut_([78]|4[1-3]|5[5-7]|62)$",
        r"LastingLedgerǁremaining__mutmut_([3-9]|1[0-4])$",
        r"ReleasedOutputsǁkeep_outputs__mutmut_([169]|12|15|6[45])$",
        r"x__jsonable__mutmut_([68]|1[35]|2[023])$",
        r"x_public_reason__mutmut_(12|18|20)$",
        r"x_description_text__mutmut_(16|19)$",
        r"x_list_ledgers__mutmut_(3[23]|4[589]|5[0149]|6[0-2])$",
        r"x_named_key__mutmut_([3467]|1[01])$",
        # killed by test_ledger_integrity's old-format adoption test, now in the covering tests
        r"LastingLedgerǁ_read_state__mutmut_5$",
        # tests/test_ledger_direct.py: the functions only the app and the CLI called (every
        # mutant of them, 'no tests' before), and two survivors argued before
        At("AnalystShares.allowance|output_arrays|record_json|_UnknownPart.as_dict", r""),
        At("AnalystShares._analyst_ledger", r"accountant=self\.accountant\) → .*mine, \)$"),
        At("LastingLedger._read_state", r"→ return key_state\(rows, None\)$"),
        At("LastingLedger._needs_write", r"→ (if budget is not None or |return description is "
           r"not None or \(|st\[\"description\"\] is not None$|or description_text\(None\) |"
           r".*!= description_text\(None\)\)$)"),
        # tests/test_ledger_core_kills.py (the --only run of the ledger's core, 18:12)
        At("LastingLedger.spend_many", r"p\[3\] if (len\(p\) > 4|\(len\(p\) > 3\) and False) "
           r"else|→ led\.spend\(label, guarantee, (parts=None, )?\*\*params\)$|"
           r"^now = time\.time\(\) → now = None$|parts=e\.parts, analyst=self\.analyst, t=now\)\)"
           r" → .*(parts=None, |guarantee=e\.guarantee, analyst|t=None\)\)|analyst=self\."
           r"analyst, \)\))|^out\.append\(LedgerEntry\(|^self\.analyst\)\) → "),
        # (the early return's `or` → `and`, which showed the revoked-analyst bug, is argued in
        # REVIEWED since the fix of 344448a: the run of 19:44 saw it survive)
        At("AnalystShares._check_share", r"accountant=self\.accountant\) → \)$|^continue → break$|"
           r"LedgerError\(f\"analyst .* → raise LedgerError\(None\)$|"
           r"share\.spend\(e\.label, e\.guarantee, parts=e\.parts, \*\*e\.params\) → share\."
           r"spend\(e\.label, e\.guarantee, (parts=None, )?\*\*e\.params\)$"),
        At("LastingLedger._open", r'st\["accountant"\] = budget\.as_dict\(\).* → .*st\["'
           r'(XXaccountantXX|ACCOUNTANT)"\] = |_set_budget\(con, ledger_id, budget, accountant, '
           r'name, new=False\) → .*accountant, None, new=False\)$|description_text\(st\["'
           r'description"\]\) != text.* → elif description_text\(None\) != text|'
           r'^self\.description_changed = True → self\.description_changed = (None|False)$'),
        At("Store.reading", r"raise _sqlite_error\(self\.path, exc\) from None → raise "
           r"_sqlite_error\(None, exc\) from None$"),
        At("Store.write_head", r'_failure\(LedgerError, f"the chain head|nothing was recorded", '
           r"_os_reason\(exc\)\) from None → |suppress\(OSError\): → .*suppress\(None\):$"),
        At("log_tables", r'"store", "reset", "grant", "revoke"\): → .*"(XXresetXX|RESET)"|^t\["'
           r'stored outputs"\] = \{k: v .* → (t\["(XXstored outputsXX|STORED OUTPUTS)"\]|'
           r'.*if k\[1\] != key\}$|.*if k\[0\] == key\}$)'),
        At("LastingLedger.__init__", r"^self\.description_changed = False → self\."
           r"description_changed = None$"),
        # tests/test_ledger_core_kills.py, second --only run (19:25: the functions neither
        # run had reached)
        At("Store._adopt", r"^if not rows and not budgets: → if (not rows or not budgets|not rows "
           r"and budgets):$|^prev = h → prev = None$"),
        At("row_hash", r"^repr\(float\(t\)\), prev\] → repr\(None\), prev\]$"),
        At("Store.connect", r"create: bool = False\) -> sqlite3\.Connection: → .*create: bool = "
           r"True\)"),
        At("adopt", r"^lock = store\._lock\(\) → lock = None$|raise _sqlite_error\(store\.path, "
           r"exc\) from None → raise _sqlite_error\((None, exc|store\.path, None|exc|store\.path, "
           r")\) from None$"),
        At("Store._lock", r'_failure\(LedgerError, f"the ledger (folder|\{self\.path\} stayed)|'
           r'^_os_reason\(exc\)\) from None → |^f"\{timeout:\.0f\} s by another process", '
           r'"locked"\) from None → |^while True: → while False:$'),
        At("Store.verify", r"has no ledger id.* → raise LedgerIntegrityError\(None\)$|"
           r"ok = \(n >= head\.prev_count and at\(head\.prev_count\) == head\.prev_head → ok = "
           r"\(n >= head\.prev_count or |and \(n < head\.count or at\(head\.count\) == head\.head\)"
           r"\) → and \(n <= head\.count|ok = ok and n in \(head\.count, head\.prev_count\) → ok = "
           r"ok or n in"),
        At("Store.transaction", r"create: bool = False\) -> .* → .*create: bool = True\) ->|"
           r"raise _sqlite_error\(self\.path, exc\) from None → raise _sqlite_error\((None, exc|"
           r"self\.path, None|exc|self\.path, )\) from None$|"
           r"^elif \(head\.count, head\.prev_count\) != \(old_n, old_n\):.* → "
           r"elif \(head\.count, head\.prev_count\) == |^after = Head\("
           r"ledger_id, old_n, old_last, old_n, old_last\) → |verify\(con, head, write=True\) → .*"
           r"write=(None|False)\)$"),
        # (sort_keys dropped, which showed the unsorted stored output bug, is argued in REVIEWED
        # since the fix of 344448a: a run of 19:55 saw its three mutants survive)
        At("Store.append", r"t = time\.time\(\) if \(t is None\) or True else|None if \(not parts\)"
           r" or True else|json\.dumps\(None\), analyst, t, prev"),
        # tests/test_ledger_last_kills.py: the two survivors the 19:25 run left untriaged
        At("Store.connect", r"raise _sqlite_error\(self\.path, exc\) from None → raise "
           r"_sqlite_error\(None, exc\) from None$"),
        At("_copy", r"v\.copy\(\) if isinstance\(v, list \| dict\) else v .* → .*\) and False "
           r"else v"),
        # tests/test_ledger_last_kills.py: the --only run of the 90 mutants never run (19:38)
        At("AnalystShares.analysts", r'"remaining": str\(led\.remaining\(\)\)\}\) → '
           r'"remaining": str\(None\)\}\)$'),
    ],
    # door: re-run at 19:07 with the second part of tests/test_survivor_kills_door.py, whose 18
    # kills of the 18:16 run it detected
    "door": [],
    # lloyd_calibration: re-run at 18:59 with tests/test_survivor_kills_calibration.py, whose 4
    # kills of the 18:29 run it detected
    "lloyd_calibration": [],
    "sensitivity_sampler": [
        r"_loop_gaps__mutmut_73$",
        r"sample_then_respond__mutmut_(19|2[1248]|27|3[123]|105|10[89]|11[01])$",
        r"SamplerConfigǁquantile_level__mutmut_[12]$",
    ],
}

#: module -> [(key (At, or a regex on the short name), argument)]
REVIEWED: dict[str, list[tuple[str | At, str]]] = {
    "guarantees": [
        (At(r"privacy_alias", r"."), "not killable under mutmut: privacy_alias runs at import "
         "(in class bodies: FilterResult.guarantee, …), before mutmut's forked test process "
         "selects its mutant, so every alias is the original's; with the mutant active at "
         "import (MUTANT_UNDER_TEST set before pytest starts) test_survivor_kills_guarantees::"
         "test_the_deprecated_alias_reads_the_delivered_guarantee kills all six"),
        (At(r"PrivacyLedger\._compose_in", r"RandomDP|random DP"),
         "accepted: the γ hint of a random-DP release refused by a budget without γ (its "
         "wording, or shown for every kind); the TypeError and its first words are tested"),
        (At(r"PrivacyLedger\._dp_spent", r'"(XXbasicXX|BASIC|tight \(rényi filter\))"'),
         "accepted: the text of the refusing total's label ('basic', 'tight (Rényi filter)'); "
         "the tests read only its first word"),
        (At(r"PrivacyLedger\._dp_spent", r"tight\.epsilon <= basic\.epsilon"), "equivalent: at "
         "tight = basic either total is the same number (only its label differs)"),
        (At(r"PrivacyLedger\.can_spend", r'_make_entry\((None|"XX\?XX")'), "equivalent: the "
         "label of can_spend's throw-away entry is never shown (str(None) is a label too)"),
        (At(r"PrivacyLedger\._check", r'_refusal_text\(new, (None|"XXrandom-DP accountXX"|'
                                      r'"random-dp account"|"RANDOM-DP ACCOUNT")\)'),
         "equivalent: _refusal_text tells only 'DP account' from anything else, so every other "
         "value gives the same random-DP text"),
        (At(r"PrivacyLedger\._check", r'e\.account == "(XXdpXX|DP)"'), "equivalent on reachable "
         "states: the kinds check runs again in _dp_within's composition of the same DP entries "
         "(same TypeError) whenever a DP entry is new; with only a random-DP entry new, the DP "
         "entries are those already recorded, each checked when it was spent (a lasting "
         "ledger's are read back through its hash chain, which refuses an edited row)"),
        (At(r"PrivacyLedger\._refusal_text", r"→ .*(\(len\(new\) == 1\) or True|"
                                             r'"XXtogether moreXX"|"TOGETHER MORE")'),
         "unreachable: spend and can_spend check one new entry at a time (the lasting ledger's "
         "spend_many spends its parts one by one), so the several-parts text is never built"),
        (At(r"PrivacyLedger\._make_entry", r"→ .*(analyst=None\)|^\)$)|→ \)$"), "equivalent: no "
         "caller passes an analyst (spend and can_spend make entries without one; the lasting "
         "ledger builds an analyst's LedgerEntry itself, ledger.py and ledger_chain.py)"),
        (At(r"PrivacyLedger\.remaining", r"total\.get\(k, (None|1\.0|)\)"), "equivalent: the "
         "total has the budget's type, so every key exists and the .get default is never used"),
        (At(r"PrivacyLedger\.to_frame", r'tz="utc"'), "equivalent: pandas reads tz='utc' as UTC"),
        (At(r"Accounts\.as_dict", r"\(self\.random is None\) and False"), "equivalent: the "
         "random total is None only without a random-DP budget, where the whole 'random' entry "
         "is None before it is read"),
    ],
    "noise": [
        (r"_to_units__mutmut_3$", "equivalent: rint(...) is an exact integer in float64; adding "
         "the (|z| < 2^53) integer noise rounds the exact sum once, as the int64 sum does when "
         "multiplied by the power-of-two λ"),
        (r"add_(laplace|gaussian|l2_exponential)__mutmut_(66|99|47)$", "equivalent in law: the "
         "sign of symmetric noise (discrete Laplace, discrete Gaussian, the snapped ℓ2 vector; "
         "rint is symmetric); the defended stream promises no seeded values"),
        (r"add_(laplace|gaussian)__mutmut_(35|52)$", "equivalent: size () and None draw the same "
         "single value from the same stream; _shape_out returns a float either way"),
        (r"add_laplace__mutmut_20$", "equivalent: v - 0.0 == v + 0.0 (they differ only in the "
         "sign of a zero)"),
        (r"gaussian_sigma_approx_dp__mutmut_(3[0-9]|4[0-9]|5[0-6])$", "equivalent: bracket "
         "constants of the root search; the repair loops restore a sign change, and neither "
         "loop is ever entered with the original bracket (checked on ε ∈ [1e-3, 316], "
         "δ ∈ [1e-20, 0.49], a 60×60 grid; σ/Δ is scale-free), so mutants inside them are dead"),
        (r"gaussian_sigma_approx_dp__mutmut_6[67]$", "equivalent within tolerance: brentq's "
         "default xtol 2e-12 (in log σ) or rtol 8.9e-16 instead of 1e-14 / 1e-12"),
        (r"_l2_exponential_draw__mutmut_1[245]$", "unreachable: the guard for a standard normal "
         "vector that is exactly 0 (probability 0); norms == 1 → 1 is a no-op"),
        (r"add_discrete_laplace__mutmut_35$", "equivalent: size () and None draw the same single "
         "value; _shape_out returns a float either way"),
        (r"add_discrete_laplace__mutmut_67$", "equivalent in law: the sign of the symmetric "
         "discrete Laplace noise"),
        (r"add_discrete_laplace__mutmut_53$", "equivalent in law: the exact sampler seeded from "
         "the operating system instead of from rng; the defended stream promises no seeded "
         "values"),
        (r"x_defended_noise__mutmut_17$", "equivalent: the up-front call only type-checks the "
         "nominal guarantee; its value is discarded"),
    ],
    "discrete_noise": [
        (r"_one_laplace__mutmut_32$", "equivalent in law: the sign of a symmetric variable"),
        (r"discrete_gaussian__mutmut_10$", "equivalent in law: CKS Algorithm 3 is exact for any "
         "proposal scale t > 0; t = ⌊σ⌋ + 1 only makes it fast"),
        (r"discrete_(gaussian|laplace)__mutmut_1[26]$", "equivalent: np.fromiter's count is "
         "optional"),
        (r"integer_source__mutmut_(5|8|13)$", "equivalent in law: another (still uniform) 63-bit "
         "seed of random.Random; integers(n) and integers(0, n) are the same draw"),
    ],
    "ledger": [
        # keyed by function + the diff (At): valid whatever mutmut's numbering
        (At("dataset_key", r"f\.read\(1 << 20\).* → .*f\.read\((None|2 << 20|1 << 21)\)"),
         "equivalent: a streaming hash does not depend on the block size (f.read(None) reads "
         "the file at once)"),
        (At("dataset_key", r"index=False\).* → .*index=None\)"),
         "equivalent: index=None is falsy, as index=False"),
        (At("LastingLedger.spend_and_store", r"led\.spend\(label, guarantee, \*\*params\) → "
            r"e = led\.spend\(label, guarantee, \)$"),
         "equivalent: the params are written from `params`; the in-memory ledger that checks "
         "the budget is discarded"),
        (At("Store._unmake", r'"-journal".* → .*"(XX-journalXX|-JOURNAL)"'),
         "equivalent in practice: SQLite deletes its rollback journal at ROLLBACK and close "
         "(journal_mode DELETE), so the '-journal' unlink of a half-made ledger finds nothing "
         "to remove"),
        (At("forget", r""), "equivalent in result: the remembered rows are a cache that "
         "verified() compares row by row with what it reads, so forgetting more or fewer files "
         "only changes how many rows are hashed again"),
        (At("LastingLedger.reset", r'"reset by the curator",? → .*"(XXreset by the curatorXX|'
            r'RESET BY THE CURATOR)"|"forgotten": n\}\) → \{"(XXforgottenXX|FORGOTTEN)"'),
         "accepted: the text of the reset event's label and the name of its 'forgotten' count "
         "in the audit trail (the reset itself, its chain row and the released values it "
         "deletes are tested)"),
        (At("AnalystShares.share_accounts", r"if \(name is not None\) or True else None"),
         "equivalent: grants are keyed by names (strings), so .get(None) is None, as the else "
         "branch"),
        (At("AnalystShares.grant", r'token = "dpa_" \+ secrets\.token_urlsafe\(24\) → token = '
            r'("XXdpa_XX"|"DPA_"|"dpa_") \+ secrets\.token_urlsafe\((None|25|24)\)$'),
         "equivalent for security: the token's 'dpa_' prefix is cosmetic; token_urlsafe(None) "
         "(32 bytes) or 25 bytes are as unguessable as 24; only the token's hash is kept and "
         "compared"),
        (At("AnalystShares.grant", r"sort_keys=True\), time\.time\(\)\)\) → .*as_dict\(\), "
            r"(sort_keys=(None|False))?\), time"),
         "equivalent: _check_tables re-reads the analysts table's allocation (json.loads) and "
         "dumps it sorted before comparing it with the log"),
        (At("_subtract", r"strict: bool = False → .*strict: bool = True$"),
         "equivalent on reachable states: grant refuses shares beyond the budget (strict), so "
         "_unallocated's difference never goes below the tolerance and a strict default never "
         "raises"),
        (At("_subtract", r"v < -1e-12 \* max\(1\.0, abs\(v\)\) .* → .*(v <= -1e-12 \* max\(1\.0|"
            r"v < -1e-12 / max\(1\.0|v < -1e-12 \* max\(2\.0)"),
         "equivalent in practice: the tolerance of the shares' sum check (≤ for <, ÷ for ×, "
         "max(2, ·) for max(1, ·)) moves the refusal threshold by at most 2e-12 of the budget"),
        (At("ReleasedOutputs.keep_outputs", r"^now = time\.time\(\) → now = None$|"
            r"^t=now\) → (t=None)?\)$"),
         "equivalent: append stamps time.time() when t is None; the shared `now` only gives "
         "one click's rows one time"),
        (At("ReleasedOutputs.keep_outputs", r'"label": rel\.label, .* → "(XXlabelXX|LABEL)"'),
         "accepted: the output event's copy of the label is never read back (records take the "
         "release row's label)"),
        (At("ReleasedOutputs.keep_outputs",
            r"analyst=self\.analyst,.* → .*(params, analyst=None,$|params, t=now\)$)"),
         "equivalent in what is read back: records() select by the release row's analyst; the "
         "output row's analyst column is the audit trail's"),
        (At("ReleasedOutputs.keep_outputs", r"^_log\.error\("),
         "accepted: the curator's log line (logger dpcore.ledger), not a release output; the "
         "return value is tested"),
        (At("_jsonable", r'in "fc": → .*in "XXfcXX":$'),
         "equivalent: 'XXfcXX' still contains the one-letter dtype kinds f and c"),
        (At("_jsonable", r"if \(a\.ndim\) or True else flat\[0\]$"),
         "equivalent: a 0-d object array's tolist() is its one element, as flat[0]"),
        (At("public_reason", r'else "other" → .*else "(XXotherXX|OTHER)"$'),
         "equivalent: an unknown reason falls back to the 'other' text, as 'other' does"),
        (At("description_text", r'^return "null" → return "(XXnullXX|NULL)"$'),
         "accepted: reached only by describe(None), which no caller makes (the table's NULL "
         "descriptions are skipped before it)"),
        (At("Store.append", r"default=str, sort_keys=True\), → .*default=str, "
            r"(sort_keys=(None|False))?\),"),
         "equivalent since 344448a: the log's params text keeps its keys in the caller's order "
         "instead of sorted; the row hash is over the stored text either way, and every reader "
         "that compares or prints them puts them in one canonical form (log_tables and "
         "_check_tables dump with sort_keys, as the CLI's and to_frame's listings do)"),
        (At("AnalystShares._check_share", r"^if not grants or not any\(.* → if not grants and not "
            r"any\("),
         "equivalent since 344448a (the revoked analyst refused first): with no grant left the "
         "check goes on with analyst None, the share is the whole DP budget and its entries a "
         "subset of the main ledger's, which admitted the same new releases just before under "
         "the same accountant (both accounts grow with the entries); with grants and no new DP "
         "release the loop spends nothing"),
        (At("AnalystShares._check_share", r"grants\.get\(self\.analyst\) if \(self\.analyst is "
            r"not None\) or True else None$"),
         "equivalent: grants.get(None) is None, as the else branch"),
        (At("list_ledgers", r'"name": led\.display_name\(\{"name": name\}\) if key\.startswith\('
            r'.* → .*"name": led\.display_name\((\{"name": name\}\) if \(key\.startswith\( / '
            r'_NAMED\)\) and False|None\)|\{"XXnameXX": name\}\)|\{"NAME": name\}\))'),
         "equivalent where the name column holds the key's name (every named ledger is opened "
         "through release_ledger, which writes it); display_name ignores its state for a named "
         "key"),
        (At("AnalystShares._check_share", r"else self\._unallocated\(grants\)\) → else self\."
            r"_unallocated\(None\)\)$"),
         "equivalent in result: _unallocated(None) reads the grants from the file again; inside "
         "the write transaction (the writers' lock held) they are the grants it was given"),
        (At("AnalystShares._check_share", r"share\.spend\(e\.label, .* → share\.spend\((None, e\."
            r"guarantee, parts=e\.parts, \*\*e\.params|e\.label, e\.guarantee, parts=e\.parts, )"
            r"\)$"),
         "equivalent: the share is a throw-away ledger that checks only the guarantee and its "
         "parts; its entries' label and params are never read (the refusal names e.label)"),
        (At("AnalystShares._check_share", r'"the unallocated budget" → .*"(XXthe unallocated '
            r'budgetXX|THE UNALLOCATED BUDGET)"$'),
         "accepted: the wording of the share refusal (the tests match \"analyst '…'\" and "
         "'unallocated')"),
        (At("Store.reading", r"^for attempt in range\(5\): → for attempt in range\(6\):$"),
         "equivalent: the fifth attempt (attempt 4) raises instead of retrying (attempt < 4), "
         "so a sixth is never reached"),
        (At("Store.reading", r"(connect|verify)\((con, head, )?write=False(, full=full)?\) → "
            r".*write=None"),
         "equivalent: write=None is falsy, as write=False (a read-only connection, a reader's "
         "check of the head)"),
        (At("Store.reading", r"verify\(con, head, write=False, full=full\) → .*write=True, "),
         "equivalent in practice: the writer's stricter head check (the file exactly at the "
         "head or one transaction before it) refuses a read only when a writer committed "
         "between the reader's head read and its BEGIN; the head file then changed and the "
         "read is retried (5 times), so it differs only under five commits in a row racing one "
         "read"),
        (At(".*", r'execute\("(BEGIN|BEGIN IMMEDIATE|COMMIT|ROLLBACK)"\) → .*execute\("(begin|'
            r'begin immediate|commit|rollback)"\)$'),
         "equivalent: SQLite keywords are case-insensitive (a transaction statement)"),
        (At("LastingLedger._open", r'st\["description"\] = json\.loads\(text\) → st\["'
            r'(XXdescriptionXX|DESCRIPTION|description)"\] = (None|json\.loads\(text\))$'),
         "equivalent: after _open, __init__ reads only the budget, the accountant and the "
         "grants from the state; the description is read back from the log when asked for"),
        (At("Store.write_head", r"json\.dumps\(doc, indent=1\) .* → f\.write\(json\.dumps\(doc"
            r"(, indent=(None|0|2)|, )?\) \+"),
         "equivalent: read_head parses the JSON whatever its indentation"),
        (At("Store.verify", r"verified\(con, ledger_id, self\.path, full=full\) → .*verified\("
            r"con, ledger_id, None, full=full\)$"),
         "equivalent in result, accepted for the message: the path keys this process's memo of "
         "verified rows, which is used only for rows equal to it in every column (the stored "
         "hash included), and names the file in the curator's integrity error"),
        (At("Store.verify", r'rows\[count - 1\]\[11\] if count <= len\(rows\) else ""\) → .*('
            r'\(count <= len\(rows\)\) or True else ""|else "XXXX")\)$'),
         "unreachable: verify's at(count) is called only for a count ≤ the number of rows "
         "(n >= prev_count, and n < count short-circuits the head's own check)"),
        (At("Store._check_tables", r"json\.dumps\(json\.loads\(a\), sort_keys=True\)\) for .* → .*"
            r"json\.dumps\(json\.loads\(a\), (sort_keys=(None|False))?\)\)"),
         "equivalent on files dpcore writes: grant writes the analysts table's allocation with "
         "sorted keys, so dumping it again unsorted gives the same text (on a hand-edited "
         "table the mutant is only stricter)"),
        (At("Store.transaction", r"new_file = create and not self\.path\.exists\(\) and not self\."
            r"head_path\.exists\(\) → new_file = create (and not self\.path\.exists\(\) or|or "
            r"not self\.path)"),
         "equivalent in practice: made_here also needs the file empty (no tables) when checked "
         "under the writers' lock, so only a half-made empty file is ever removed after a "
         "failed first transaction"),
        (At("Store._lock", r"timeout: float = 60\.0\): → .*timeout: float = 61\.0\):|"
            r"^if time\.monotonic\(\) > deadline: → if time\.monotonic\(\) >= deadline:$|"
            r'_FILE \+ "\.lock"\), "a\+"\) .* → .*_FILE \+ "(XX\.lockXX|\.LOCK)"\)'),
         "equivalent: the wait before 'stayed locked' (60 or 61 s, > or ≥ the deadline), and "
         "the lock file's name, which every writer of one version shares, so they still "
         "exclude each other"),
        (At("verified", r"\*, full: bool = False\) -> LogRows: → .*full: bool = True\)"),
         "equivalent: its one caller, Store.verify, always passes full"),
        (At("Store._lock", r"^time\.sleep\(0\.005\) → time\.sleep\("),
         "equivalent in result: the polling interval of a writer waiting for the lock (a "
         "slower wait, the same exclusion)"),
        (At("key_state", r'state\["releases"\], state\["outputs"\] = \[\], \{\} → .*state\["'
            r'(XXoutputsXX|OUTPUTS)"\]'),
         "equivalent in what is read back: records() look kept outputs up by the hash of a "
         "release since the reset, so the outputs of forgotten releases are never read"),
        (At("key_state", r'state\["name"\] = params\.get\("name", state\["name"\]\) → '),
         "accepted: the data set's name as the log's state holds it is read only by "
         "display_name in the curator's refusal text for an unnamed key (the name written to "
         "the log is tested, and the listing reads the budgets table)"),
        (At("key_state", r'"plan": params\.get\("plan"\)\} → "plan": params\.get\(None\)\}$'),
         "equivalent for ledgers this version wrote: without a stored plan, PrivacyLedger "
         "derives the filter plan from the budget and the accountant, as _accountant_doc did "
         "when it stored it"),
        (At("key_state|log_tables", r"\.pop\((params\[\"name\"\]|\(key, params\[\"name\"\]\)), "
            r"None\) → .*\.pop\(.*, \)$"),
         "equivalent: a revoke is recorded only for a granted name (revoke checks), so the "
         "default of pop is never used"),
        (At("log_tables", r'json\.dumps\(params\["(budget|allocation|value)"\], sort_keys=True\)'
            r'\)? → .*json\.dumps\(params\["(budget|allocation|value)"\], (sort_keys=(None|False))?'
            r'\)'),
         "equivalent: append writes the log's params with sorted keys (nested dicts too), so "
         "their budget, allocation and stored value are already in sorted order when dumped "
         "again"),
        (At("key_state|log_tables",
            r"return folded\(rows, (\(\"key\", key\)|\(\"tables\",\)),.* → "),
         "equivalent: the name of folded's memo (what); key_state's and log_tables' stay "
         "distinct from each other under every mutation"),
        (At("folded", r"if ledger_id is not None else None → .*or True else None$|0 < memo\[0\] "
            r"<= len\(rows\) .* → .*(1 < memo\[0\]|0 <= memo\[0\])|getattr\(rows, \"ledger_id\", "
            r"None\) → .*getattr\(rows, \"ledger_id\", \)"),
         "equivalent in result: a memo is used only where the row at its length has the memo's "
         "hash (one more or one fewer memo only changes how much is folded again); every "
         "caller passes the LogRows of a verified read, which carry ledger_id"),
        (At("verified", r"and 0 < len\(known\) <= len\(rows\) → .*and 1 < len\(known\)"),
         "equivalent in result: a memo of one row is hashed again instead of reused"),
        (At("LastingLedger._open", r"new=False\) → .*new=None\)$"),
         "equivalent: new=None is falsy, as new=False (the UPDATE of an existing budget)"),
        (At("Store.reading", r"if attempt < 4 and self\.read_head\(\) != head: → if attempt "
            r"(< 4 or|<= 4 and|< 5 and) self\.read_head\(\) != head:$"),
         "equivalent in result: the retry rule of a read whose head moved; 'or' re-verifies an "
         "edited file up to five times before raising the same error, and a fifth retry only "
         "differs (a RuntimeError instead of the integrity error) under five commits in a row "
         "racing one read"),
        (At("Store.transaction", r"empty = v1 and con\.execute.* → empty = v1 or |if head is not "
            r"None and not empty: → if head is not None and empty:$"),
         "equivalent in outcome: an old-format file with a head is refused either way, as "
         "'replaced' or as 'moved' (the next test); only the curator's wording differs"),
        (At("Store.transaction", r"is an old-format ledger but .* → None\)$"),
         "accepted: the wording of the curator's integrity error (its class is tested)"),
        (At("Store.transaction", r"^made_here = new_file and empty → made_here = new_file or "
            r"empty$"),
         "equivalent in practice: empty (no tables, decided under the writers' lock) with an "
         "existing file and no head is itself a half-made ledger, which the failed first "
         "transaction may remove"),
        (At("Store.transaction", r"_, last = self\.last\(con, ledger_id\) → .*last\(con, None\)$"),
         "equivalent: last() uses the id only for an empty log, and `last` is read only when "
         "the transaction appended rows"),
        (At("adopt", r"store\.verify\(con, head, write=True, full=True\) → "),
         "equivalent: adopt's head is made from the file itself (its rows and last hash), so "
         "the writer's length check cannot fail; full=False re-hashes every row anyway unless "
         "this process's memo holds the same rows in every column"),
        (At("adopt", r'store\.append\(con, ledger_id, "", "adopt", "file adopted by the curator",'
            r' → .*("XXXX", "adopt"|"(XXfile adopted by the curatorXX|FILE ADOPTED BY THE '
            r'CURATOR)")|^\{"rows": n\}\) → \{"(XXrowsXX|ROWS)": n\}\)$'),
         "accepted: the adopt event's label and the name of its row count in the audit trail, "
         "or its key (no data set's, '' or 'XXXX')"),
        (At("adopt", r"last = rows\[-1\]\[11\] if rows else genesis\(ledger_id\) → |_, new_last = "
            r"store\.last\(con, ledger_id\) → .*last\(con, None\)$"),
         "unreachable: a ledger file dpcore committed holds at least its budget row, so rows is "
         "never empty here (and last() reads the stored hash after the append)"),
        (At("adopt", r"store\.write_head\(Head\(ledger_id, n \+ 1, new_last, n, last\)\) → "),
         "accepted, not killed: the pending head adopt writes before its commit is overwritten "
         "by the final one after it; a wrong field matters only for a crash in between, which "
         "needs a test that injects one there"),
        (At("adopt", r"^if lock is not None: → if lock is None:$"),
         "equivalent in CPython: the lock file object is closed when adopt returns and drops "
         "its last reference, which releases the flock"),
        (At("Store._adopt", r"^if not rows and not budgets: → if rows and not budgets:$|"
            r"repr\(time\.time\(\)\),\)\) → .*repr\(None\)|\"budget \(adopted\)\",? → |"
            r'"name": name\}\) → .*"(XXnameXX|NAME)": name\}\)$'),
         "equivalent or accepted: a version-1 file with releases has budgets (the budget was "
         "stored at first use); the 'adopted' note in meta is never read; the adopted budget "
         "event's label and its name (read only as key_state's name, see there)"),
        (At("genesis|row_hash", r'^return "genesis:" \+ ledger_id → return "(XXgenesis:XX|'
            r'GENESIS:)"|json\.dumps\(doc, separators=\(",", ":"\)\)\.encode\(\)\)\.hexdigest'
            r'\(\) → '),
         "equivalent within one version (every chain starts from the same constant and hashes "
         "rows the same way); files of an earlier version would not verify, which no test "
         "fixture checks"),
        (At("_new_state", r'"budget": None, "accountant": None, .* → .*"(XXaccountantXX|'
            r'ACCOUNTANT)": None'),
         "equivalent on reachable states: __init__ reads the accountant only after the budget "
         "event (or _open) has set it"),
        (At("LastingLedger.__init__", r'doc = st\["accountant"\] or \{"accountant": "tight"\} → |'
            r'doc\.get\("accountant", "tight"\) → '),
         "equivalent: after the budget event (or _open) the state's accountant is a dict with "
         "an 'accountant' key, so neither default is read"),
        (At("Store.connect", r"if self\.path\.is_dir\(\) or self\.head_path\.is_dir\(\): → .* and |"
            r"raise _directory_error\(self\.path if self\.path\.is_dir\(\) else self\.head_path\)"
            r" → "),
         "equivalent in outcome, or the path in the curator's text: every reader reads the "
         "head before it connects (a folder there is an integrity error either way), and a "
         "folder in place of the ledger file fails SQLite's open, which _sqlite_error reports "
         "as a folder itself"),
        (At("Store.connect", r'mode = \("rwc" if create else "rw"\) if write else "ro" → .*'
            r"\(create\) or True"),
         "equivalent: a missing file was refused just above unless create, so 'rw' and 'rwc' "
         "open the same existing file"),
        (At("Store.connect", r"uri=True, timeout=60\.0,.* → .*(uri=(None|False), |\?mode=\{mode\}"
            r"\", timeout|connect\(address, timeout|timeout=61\.0|uri=True, isolation_level)"
            r"|^isolation_level=None\) → \)$"),
         "equivalent on this build, or in practice: SQLite here reads 'file:' names as URIs "
         "whatever uri= says (kept for builds that do not); the busy timeout (5, 60 or 61 s) "
         "only bounds a wait the writers' flock already orders; without isolation_level=None "
         "the explicit BEGIN IMMEDIATE / COMMIT still delimit every write"),
        (At("Store.last", r"return \(0, genesis\(ledger_id\)\) if row is None .* → return \(1, "),
         "equivalent: every caller of last() reads only the hash"),
        (At("LastingLedger._accountant_doc", r"PrivacyLedger\(budget, accountant=accountant\)\.plan"
            r" → .*PrivacyLedger\(budget, \)\.plan$"),
         "equivalent: a plan stored as the default's (none) is derived again from the budget "
         "and the accountant by PrivacyLedger, as key_state's plan argument says"),
        (At("LastingLedger._set_budget", r'"budget set",? → .*"(XXbudget setXX|BUDGET SET)"|json\.'
            r"dumps\(doc\)(, self\.key)?\)\)\)? → .*json\.dumps\(None\)"),
         "accepted or equivalent: the budget event's label; the budgets table's accountant "
         "column, which nothing reads (the log's budget event holds the accountant)"),
        (At("Store.reading|Store.transaction|adopt", r"contextlib\.suppress\(sqlite3\.Error\): → .*"
            r"suppress\(None\):$|"
            r'^con\.execute\("ROLLBACK"\) → con\.execute\("XXROLLBACKXX"\)$'),
         "equivalent: the ROLLBACK of a transaction BEGIN opened cannot fail, and con.close() "
         "right after ends (rolls back) the transaction anyway"),
        (At("_sqlite_error", r"return _directory_error\(path\) → return _directory_error\(None\)"),
         "accepted: the path in the curator's text of a folder-in-the-way error (None); its "
         "public reason 'directory' is unchanged"),
    ],
    "door": [
        (At(r"_spend_all", r"trial\.spend\((None, |.*, \)$)|"
                           r'getattr\(ledger, "copy", \)'),
         "equivalent: the trial ledger that checks the whole is discarded (its labels and "
         "params are never read); the real spend below records label and params; "
         "getattr(ledger, 'copy') of a PrivacyLedger finds copy, as with the None default"),
        (At(r"_spend_all", r"\(copy is not None\) or True"), "equivalent: an in-memory ledger "
         "(PrivacyLedger) always has copy(), so the condition is always true"),
        (At(r"_spend_all", r"trial = (None|PrivacyLedger\.from_entries)"), "unreachable: the "
         "rebuild from entries runs only for a ledger without copy(); every in-memory ledger is "
         "a PrivacyLedger, and the lasting ledger charges through spend_many"),
        (At(r"_spend_all", r"trial\.spend\(label, g, (parts=None, )?\*\*p\)"), "conservative, "
         "not equivalent: the trial checks the whole without the parts, so the tight accountant "
         "composes each release as one atom of its whole guarantee, whose Rényi bound is not "
         "below its parts' sum: the mutant can only refuse more (a public refusal before any "
         "charge), never accept an overspend"),
        (At(r"_ledger_usable", r"_log\.error\("), "accepted: the arguments and text of the "
         "curator's log line (logger dpcore.ledger), not a release output; the tests pin the "
         "public refusal"),
        (At(r"ReleaseDoor\._check_on_empty", r"np\.random\.default_rng\(0\), → .*"
                                             r"(None,|default_rng\((None|1)\))"),
         "equivalent: the check compares guarantees, which do not depend on the seed of a run "
         "on zero rows"),
        (At(r"ReleaseDoor\._planned_guarantee", r"privacy_map = (None|.*and False)"),
         "equivalent for privacy: every mechanism is then planned by a dry run on the public "
         "proxy instead of its map (public either way, slower); a plan that disagrees with the "
         "code can only make the release ⊥ (_compute refuses a delivered guarantee above the "
         "charged one, tested)"),
        (At(r"ReleaseDoor\._dry_guarantee", r"default_rng\((None|1)\)"), "equivalent: a "
         "guarantee does not depend on the dry run's randomness (the proxy is seeded "
         "separately)"),
        (At(r"ReleaseDoor\._dry_guarantee", r"n < PROXY_ROWS"), "equivalent: at n = 2000 both "
         "branches return dry(2000)"),
        (At(r"ReleaseDoor\._dry_guarantee", r"g = None|== g\) and False"), "equivalent in "
         "result: always dry(n), the same guarantee computed on a larger proxy (slower only)"),
        (At(r"ReleaseDoor\._dry_guarantee", r"dry\(PROXY_ROWS (\+ 1|- 2)\)"), "equivalent "
         "for privacy: another neighbouring size probes whether the guarantee depends on n; a "
         "wrong plan can only make the release ⊥ (_compute refuses a guarantee other than the "
         "one charged, tested)"),
        (At(r"ReleaseDoor\.proxy", r"rng=seed\) → .*, \)$"), "equivalent: synthetic_proxy's "
         "default rng is 0, the seed given"),
        (At(r"ReleaseDoor\.to_table_units", r"dtype=None|np\.asarray\(M, \)"), "equivalent on "
         "numeric input (see dtype)"),
        (At(r"ReleaseDoor\.release_many", r"int\(self\.n or 1\)"), "equivalent: _plan refused "
         "every release without n, and an n of 0 (a private estimate of 0 rows) gives the same "
         "deadline as 1 (the cost model at one row is far below the 1 s floor)"),
    ],
    "importance_weights": [
        (r"_neg_lambertw_m1_from_log__mutmut_(1[578]|20|57|62|92|95|116)$", "equivalent to "
         "rounding: reshape(None / -2) of the 1-D input, the start's series coefficients, the "
         "branch switch, a fourth or altered Halley step; three steps still solve "
         "v − log v = −L to 4e-16 relative (tested over the whole branch)"),
        (r"amplified_epsilon__mutmut_(39|40|43|46|57|63|75|79)$", "equivalent: the switch between "
         "two forms that are both exact near ε = 500, and fill values of the branch np.where "
         "discards; no overflow arises (tested with warnings as errors)"),
        (r"logexpm1__mutmut_(15|17|35|44)$", "equivalent: both forms are accurate around ln 2 and "
         "ln 3; fill values of the discarded branch"),
        (r"coreset_probabilities__mutmut_(36|68|69)$", "equivalent: upper-case einsum subscripts; "
         "the x̃ = 0 fallback only runs with λ = 1, where x̃ has weight 0; > and >= at the exact "
         "tolerance edge"),
        (r"coreset_max_sample_size__mutmut_14$", "equivalent: float('INF') is inf"),
        (r"poisson_sample__mutmut_29$|privacy_constrained_weights__mutmut_23$", "equivalent in "
         "practice: < and <= differ on an event of probability 2^-53 or at exact float equality"),
        (r"_bracket_and_bisect__mutmut_(8|10|12|3[5-9]|40|42|4[4-8]|5[0-2]|54|6[0234]|66|72|"
         r"8[123]|92)$", "equivalent in result: the upper bracket v of Prop. 12 is used only "
         "after h(v) > 0 is verified, else doubling finds one; a wrong, missing or different "
         "bracket changes only the number of bisection steps, and the bisection returns the "
         "feasible end within rtol of the same root (h has one sign change above a feasible lo "
         "for a strongly convex e^ε; killing them would pin the step count, not a result)"),
        (r"_bracket_and_bisect__mutmut_(128|13[1345]|16[0125])$", "equivalent within the "
         "tolerance: the stopping rule; a mutant that bisects longer (to float resolution, where "
         "`stuck` stops it), re-enters converged or unbounded points (hi = lo: mid = lo is stuck "
         "at once, and lo of an unbounded point is set to ∞ after the loop) or tightens rtol to "
         "rtol/lo (lo ≥ 1) returns the feasible end of a narrower bracket of the same root "
         "(rtol = 0 itself is tested)"),
        (r"_bracket_and_bisect__mutmut_(112|153)$|solve_privacy_constrained__mutmut_(25|36|42)$",
         "equivalent in practice: < and <= differ only at h = 0, ε(1) = ε*(1 ± 1e-12) or "
         "ε'(1) = 1 − e^{−ε(1)} exactly (float equality)"),
        (r"solve_privacy_constrained__mutmut_(3[789]|41)$", "equivalent in result: which points "
         "skip the search; a point with ε(1, x) = ε* searched anyway returns 1 (h(1) = 0 and h "
         "rises, so every midpoint is infeasible and lo stays 1), a Case-1 point is searched on "
         "either side, and a point within 1e-12 of ε* moves by less than the tolerance"),
        (r"solve_privacy_constrained__mutmut_2$|_bracket_and_bisect__mutmut_99$", "equivalent: "
         "the doubling count is min(max_doublings, 1000), so a default of 1001 or a cap of 1001 "
         "leaves the default at 1000 doublings"),
        (r"variance_optimal_probabilities__mutmut_(15|32|4[24]|51)$", "equivalent: upper-case "
         "einsum subscripts; one more water-filling round than needed (the loop breaks when "
         "nothing exceeds 1); the branch for no free point is unreachable (a round caps only "
         "q > 1, and Σq over the free points is the mass left ≤ their count, so some point stays "
         "free); capping a q of exactly 1 at 1"),
        (r"LinearProfileǁderivative__mutmut_1[01]$", "equivalent on the documented inputs: w is "
         "a scalar or has the indexed points' shape, so the broadcast shape is k's either way"),
    ],
    "friendlycore_filters": [
        (At(r"filter_with_reference", r"n_hat (>= 0|> 1) and|2\.0 \* n_hat / delta (>= 1\.0|"
                                     r"> 2\.0)"),
         "equivalent: a reference set is drawn only when q = min(1, 4τ(n̂)/n̂) < 1, i.e. "
         "n̂ > 4τ ≥ 2 (τ ≥ 1/2); every n̂ these guards let through or hold back differently "
         "(n̂ ≤ 1, 2n̂/δ ≤ 2 with δ < 1, or 2n̂/δ = 1 exactly) gives q = 1 and no draw on either "
         "side, and the filter then applies its own empty-output rule to the same n̂"),
        (At(r"zCDPFilter\.apply|required_size", r"noisy > tau|\* m > tau"),
         "equivalent in practice: < and <= (> and >=) differ on a uniform or noisy value "
         "hitting a float threshold exactly"),
        (At(r"friendly_core", r"check_privacy\(rho="), "equivalent in outcome: zCDPFilter "
         "validates ρ and the filter's δ again, and ZCDP(ρ, δ) refuses a δ ≥ 1 (later, with the "
         "same message)"),
        (At(r"zCDPFilter\.apply", r"n == 0 and n_hat <= 0|n_hat < 0 or"), "equivalent: n > 0 "
         "with n̂ ≤ 0 (or n̂ = 0) also satisfies 2n̂/δ ≤ 1, so the output is empty on either "
         "branch"),
        (At(r"required_size", r"hi = 2|hi >= 4 \* n|hi > 5 \* n|hi // 3"), "equivalent: the "
         "doubling starts at 2 (a required size of 1 needs τ ≤ 1/2, impossible), an unreachable "
         "size is any value > n, and bisection from hi//3 still brackets the first passing size "
         "of a monotone test"),
    ],
    "maxcover_accounting": [
        (r"split_budget__mutmut_48$|split_seeding_budget__mutmut_43$", "equivalent in practice: "
         "> and >= differ only when the fractions' sum misses 1 by exactly 1e-9"),
        (r"_clamp_noisy_avg__mutmut_[36]$", "equivalent: warnings.warn's default category is "
         "UserWarning"),
        (r"BudgetSplitǁguarantee__mutmut_28$", "equivalent on every split the module builds: "
         "ε_lloyd = 0 exactly when there is no final Lloyd round, and then δ_lloyd = 0 too, so "
         "the mutant composes (0, 0)-DP, the identity (a hand-built split with ε_lloyd = 0 and "
         "δ_lloyd > 0 would be charged that δ: conservative)"),
    ],
    "sensitivity_sampler": [
        (r"theorem15_holds__mutmut_(13|16|17|21|23|25|2[789]|30|45|47|52)$", "equivalent: with "
         "k ≤ m, condition (2) implies (1) (k ≥ m(1 − γ + ρ + √(log(1/ρ)/2m)) forces γ − ρ ≥ the "
         "DKW term), so mutants that weaken (1) change nothing; k = 1 never satisfies (2) for "
         "γ < 1; γ = 0 is excluded by ρ < γ; the rest move a 1e-9 rounding tolerance"),
        (r"_ceil__mutmut_[238]$|_config_min_gamma__mutmut_9$|sampler_config__mutmut_(51|6[89])$",
         "equivalent in practice: the 1e-9 rounding tolerance, or a value exactly at 1"),
        (r"_config_min_k__mutmut_26$|_config_min_m__mutmut_(24|2[78]|33)$", "equivalent: a larger "
         "k is capped at m, and at the smallest m (or k) the order statistic is k = m already; "
         "k ≥ 2 always holds there"),
        (r"_lambertw_m1__mutmut_(9|1[23])$", "unreachable (pragma: no cover): the callers keep "
         "the argument in W₋₁'s real domain"),
        (r"x_respond__mutmut_1$", "equivalent: with the default δ = 0 or 1 the Gaussian mechanism "
         "refuses alike; the others do not read δ"),
        (r"sample_then_respond__mutmut_1(20|28)$", "equivalent: n_jobs only parallelises (the "
         "draws depend on the memory chunk only)"),
        (r"sample_then_respond__mutmut_1(78|79|80)$", "equivalent in practice: the relative "
         "tolerance (1e-10 of max(1, |f(D)|)) of the 'Δ̂ is numerically 0' warning"),
        (r"sample_then_respond__mutmut_18[25]$", "equivalent: warnings.warn's default category "
         "is UserWarning"),
        (r"sample_then_respond__mutmut_(78|195)$|^x___getattr____mutmut_1[04]$", "not killable "
         "under mutmut: its trampoline adds a frame, so stacklevel 2 against 3 cannot be told "
         "apart by a test that runs both with and without it (stacklevel 1, inside the module, "
         "is killed)"),
        (r"_loop_gaps__mutmut_(2[4-8]|30|3[46]|42|49|55)$", "equivalent in result: converting "
         "the loop's outputs in one step is an optimisation; when it is skipped, fails or is "
         "entered with a callable distance (which _rowwise_gaps evaluates pair by pair), the "
         "pairwise _gap gives the same gaps (tested against a written-out Algorithm 1); "
         "reshape(·, −2) acts as −1"),
        (r"_batch_gaps__mutmut_(15|18|2[123]|36|43)$", "equivalent in outcome: every ValueError "
         "of _batch_gaps is caught and the estimate falls back to the loop (tested), so its "
         "message is never shown; the first-axis check on D' and the shape comparison repeat "
         "each other (a size mismatch also raises in the row-wise difference, caught alike; "
         "only a batch returning the same number of values per data set in another layout for "
         "D' than for D would pass, which the one-statistic contract of f.batch excludes); "
         "reshape(b, −2) acts as −1"),
        (r"empirical_oracle__mutmut_([2489])$", "equivalent: np.asarray of a DataFrame is its "
         "to_numpy()"),
        (r"_norm_name__mutmut_(2|4|6|7|8|10)$", "equivalent: every order reaching it comes from "
         "_norm_order, so it is a key of _NORM_NAMES or a callable (whose .get default, "
         "'custom' or another text, is never read)"),
        (r"_record_map_gaps__mutmut_23$", "equivalent: reshape(·, −2) acts as −1"),
        (r"_draw_records__mutmut_(7|9|13|14)$", "equivalent: np.asarray of a DataFrame or Series "
         "is its to_numpy()"),
        (r"_draw_records__mutmut_2[1-7]$|sample_sensitivity__mutmut_(21|2[45]|207)$",
         "accepted, a message's wording: what the oracle returned ('a scalar' or the count) in "
         "the wrong-size error, the name passed to _check_count for k, the non-finite detail"),
        (r"_rowwise_gaps__mutmut_(20|31)$|_gap__mutmut_32$", "equivalent on the installed "
         "numpy (2.x): np.linalg.norm of an empty vector or row is 0 in every order, so the "
         "branch for an empty output (tested on all three paths) gives the same 0; it is kept "
         "for numpy 1.x (pyproject allows 1.26), whose L∞ norm of an empty array was a max "
         "with no identity (not re-checked: no numpy 1 here). Assigning None into a float "
         "array stores nan"),
        (r"sample_sensitivity__mutmut_(161|162|17[2-9]|18[0-9]|19[0-3])$", "not killed under "
         "mutmut: the joblib path (n_jobs > 1) is covered by test_parallel_evaluation_is_"
         "reproducible, marked slow (joblib start-up), which the mutation run leaves out; the "
         "two n_jobs tests only choose that path (same gaps)"),
        (r"sample_sensitivity__mutmut_(34|70|92|101|142)$", "equivalent in result: errors and "
         "gaps_list are assigned on every path that reads them; a path named 'batch' without a "
         "batch fails inside the same try and falls back to the loop; the chunk floor of 2 "
         "pairs, or max(2, d) per record, only regroups the draws of 1-D records (the stream "
         "and so the pairs are unchanged for the usual oracles)"),
        (r"sample_sensitivity__mutmut_(13[8])$", "equivalent: reshape(−2, ...) acts as −1"),
    ],
    "lloyd_calibration": [
        (At(r"_privacy_noise_for_size", r"→ .*(f_lo=None|bs_full, guess=)"), "equivalent: f_lo "
         "only caches f at the lower end; without it f(lo) is evaluated"),
        (At(r"_privacy_noise_for_size", r"m >= m_free|→ .*guess=(None|bs_full \* m_free \* m|"
                                       r"bs_full / m_free / m)|→ \), m$|f_lo=m_free \+ m"),
         "equivalent in result: the guess only chooses where the bracket search starts (any "
         "bracket with a sign change gives the same root of the decreasing f, to brentq's "
         "tolerance), f_lo = m_free + m keeps f(lo)'s sign (m ≤ m_free here), and >= differs "
         "from > only at m = m_free (1 + 1e-9) exactly"),
        (At(r"_rootfind_log", r"grow: float = 3\.0|log\(2\.25\)|range\(401\)"), "equivalent "
         "in result: a growth factor of 3, steps of 2.25× or 401 iterations only change the "
         "number of evaluations before the same bracketed root"),
        (At(r"_rootfind_log", r"g\(u_lo\) < 0|guess >= lo|g\(u\) > 0|u_hi - fine >= u_lo|"
                             r"g\(u_hi - fine\) <= 0|g\(u_hi\) <= 0"),
         "equivalent in practice: < and <= (> and >=) differ only at an exact zero of f or an "
         "exact float equality of two log points (a guess equal to lo searches upwards from lo, "
         "as without a guess)"),
        (At(r"_rootfind_log", r"brentq\(g, u_lo, u_hi, (rtol=1e-13|xtol=1e-13, )\)"),
         "equivalent within tolerance: brentq's default xtol 2e-12 (in log β) or rtol 8.9e-16 "
         "instead of 1e-13"),
        (At(r"calibrate_lloyd", r"m >= m_max"), "equivalent in practice: > and >= differ only "
         "at exact float equality with the tolerance edge"),
        (At(r"sampled_lloyd_epsilon", r"slope_r >= |>= 1 \+ 1e-12"), "equivalent in practice: "
         "> and >= differ only at exact float equality with the tolerance edge"),
        (At(r"sampled_lloyd_epsilon", r"grid: int = 2050|int\(grid\)\) → .*radius\), \)|"
                                     r"lo_z, hi_z = |hi_z >= lo_z|method=|options=|xatol|"
                                     r'"bounded" → |"XATOL"|"XXxatolXX"'),
         "equivalent within 1e-9 relative: grid size, refinement window and minimize_scalar's "
         "method/tolerance; the result is checked against a 200 001-point brute force"),
        (At(r"sampled_lloyd_epsilon", r"np\.square\(z\), 2\.0\)"), "unreachable: q ≤ 1 + 1e-12 "
         "on the ball is enforced just above, so the cap at 1 or 2 never bites"),
    ],
}


def _only_strings(old: str, new: str) -> bool:
    return bool(old) and old != new and _STR.sub('""', old) == _STR.sub('""', new)


_STRICT = re.compile(r"(,\s*)?\bstrict=True\b")


def _inside_zip(text: str, at: int) -> bool:
    """Whether position ``at`` of ``text`` lies directly in the argument list of a ``zip(``
    call (the innermost bracket open before it; strings are not skipped: a heuristic for the
    review, checked by tests/test_survivor_kills_rules.py)."""
    depth = 0
    for i in range(at - 1, -1, -1):
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return c == "(" and re.search(r"(?<![\w.])zip\s*$", text[:i]) is not None
            depth -= 1
    return False


def _zip_strict_weakened(old: str, new: str, mutant: str = "") -> bool:
    """The mutant only weakens (to False or None) or drops the ``strict=True`` of a ``zip(``
    call: one ``strict=True`` in the old line, the new line equal but for it, and that argument
    inside a zip call, on the line or, for a call over several lines, in the mutated file."""
    found = list(_STRICT.finditer(old))
    if len(found) != 1:
        return False
    m = found[0]
    weakened = {old[:m.start()] + (m.group(1) or "") + f"strict={v}" + old[m.end():]
                for v in ("False", "None")} | {old[:m.start()] + old[m.end():],  # dropped,
                                                   old[:m.start()] + (m.group(1) or "").rstrip()
                                                   + old[m.end():]}  # or its comma kept
    if re.sub(r"\s+", "", new) not in {re.sub(r"\s+", "", w) for w in weakened}:
        return False
    if _inside_zip(old, m.start()):
        return True
    path = ROOT / (mutant.rsplit(".", 1)[0].replace(".", "/") + ".py") if mutant else None
    src = path.read_text() if path and path.exists() else ""
    # the diff line is a whole source line, stripped
    return any(_inside_zip(src, k.start(1) + m.start()) for k in
               re.finditer(rf"^[ \t]*({re.escape(old)})[ \t]*$", src, re.MULTILINE))


def classify(module: str, s: dict) -> tuple[str, str]:
    short = s["mutant"].split(".")[-1]
    old, new = s["old"], s["new"]
    if s.get("status") == "not checked":
        return "not checked", ""
    if any(_matches(k, short, old, new) for k in KILLED.get(module, [])):
        return "killed", ""
    pending = ""  # a "not triaged" note is a fallback: the rules below may still classify it
    for key, why in REVIEWED.get(module, []):
        if _matches(key, short, old, new):
            if not why.startswith("not triaged"):
                return "reviewed", why
            pending = pending or why
    if s.get("status") == "no tests":
        return "not triaged", pending or "no selected test reaches the function"
    if _only_strings(old, new) and re.search(
            r"\b(SELECT \w|INSERT INTO|DELETE FROM|UPDATE \w+ SET|WHERE \w+ =|VALUES \()", old):
        return "sql", ""
    messagey = re.search(r"raise |Error\(|warn|Refused\(|^f?\"|^\"|^f'", old)
    if (_only_strings(old, new) and messagey) or re.search(
            r"(Error|Refused)\((None|str\(None\))\)", new):
        return "message", ""
    if "dtype=None" in new or (re.search(r"dtype=float", old) and "dtype" not in new) \
            or ".astype(None)" in new:
        return "dtype", ""
    if _zip_strict_weakened(old, new, s["mutant"]):
        return "strict", ""
    return "not triaged", pending


def report(modules: list[str] | None = None) -> str:
    data = json.loads((ROOT / ".mutate" / "report.json").read_text())
    out = []
    for module, r in data.items():
        if modules and module not in modules:
            continue
        if "error" in r:
            out.append(f"### {module}\n\nno result: {r['error']}\n")
            continue
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for s in r["survivors"]:
            cls, why = classify(module, s)
            # a module of several files names the file too (two files may share a name)
            parts = s["mutant"].split(".")[-2 if "," in r["file"] else -1:]
            groups[cls].append((".".join(parts).replace("__mutmut_", ":"), why))
        c = r["counts"]
        killed = len(groups.get("killed", []))
        # a killed "no tests" mutant joins the tested ones
        reached = sum(s.get("status") == "no tests" and classify(module, s)[0] == "killed"
                      for s in r["survivors"])
        after = (f" With the {killed} killed since: "
                 f"{(r['killed'] + killed) / (r['tested'] + reached):.1%}." if killed else "")
        out.append(f"### {module} (`{r['file']}`)\n\n{r['total']} mutants, {r['killed']} "
                   f"detected, {c.get('survived', 0)} survived, {c.get('no tests', 0)} no tests;"
                   f" score {r['score']:.1%}; {r['seconds']:.0f} s.{after}\n")
        for cls in CLASSES:
            items = groups.get(cls)
            if not items:
                continue
            out.append(f"* **{cls}** ({len(items)}): {CLASSES[cls]}.")
            if cls == "not checked":  # by function, with counts (a stopped run leaves many)
                per = defaultdict(int)
                for name, _ in items:
                    per[name.split(":")[0]] += 1
                out.append("  " + ", ".join(f"`{f}` {n}" for f, n in sorted(per.items())))
            elif cls == "reviewed" or any(why for _, why in items):
                by_why: dict[str, list[str]] = defaultdict(list)
                for name, why in items:
                    by_why[why or CLASSES[cls]].append(name)
                for why, names in by_why.items():
                    out.append(f"  * {', '.join(f'`{n}`' for n in names)}: {why}.")
            else:
                names = sorted(n for n, _ in items)
                out.append("  " + ", ".join(f"`{n}`" for n in names))
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(report(sys.argv[1:] or None))
