"""A curator's deployment: a private file, its public description and budget, behind the door.

``dpcore app --private data.csv --schema schema.json --budget 2,1e-6`` checks the three inputs
(here, in the curator's terminal, where messages about the file may be explicit), then passes
them to the Streamlit process in environment variables (:data:`ENV`). The app reads them back
with :func:`deployment_from_env` and opens the same :class:`~dpcore.release.door.ReleaseDoor` for
every session, over the lasting ledger, locked in release mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpcore.privacy.guarantees import Guarantee
from dpcore.privacy.ledger import LEDGER_DIR_ENV, LastingLedger, dataset_key, parse_budget
from dpcore.release.schema import PublicDescription

__all__ = ["ENV", "Deployment", "curator_env", "deployment_from_env", "open_door"]

#: Environment variables of a curator deployment (the ledger directory: ``DPCORE_LEDGER_DIR``).
ENV = {"data": "DPCORE_PRIVATE_DATA", "schema": "DPCORE_PRIVATE_SCHEMA",
       "budget": "DPCORE_PRIVATE_BUDGET"}


@dataclass(frozen=True)
class Deployment:
    """What a curator started the app with (paths and budget: public to the curator only)."""

    data: Path
    schema: Path
    budget: Guarantee
    ledger_dir: Path | None


def _check(data: str | None, schema: str | None, budget: str | None) -> None:
    missing = [f for f, v in (("--private", data), ("--schema", schema), ("--budget", budget))
               if not v]
    if missing:
        raise ValueError(f"a curator deployment needs --private, --schema and --budget "
                         f"(missing {', '.join(missing)})")
    for flag, path in (("--private", data), ("--schema", schema)):
        if not Path(path).expanduser().exists():
            raise ValueError(f"{flag} {path!r}: no such file")


def open_door(data: str | Path, schema: str | Path, budget: Guarantee | str | None,
              ledger_dir: str | Path | None = None, *, table=None):
    """The :class:`~dpcore.release.door.ReleaseDoor` of a private file over its lasting ledger.

    ``budget`` may be None when the data set already has a ledger (its stored budget is used).
    """
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.runconfig import read_table

    desc = PublicDescription.from_json(Path(schema).expanduser().read_text())
    if table is None:
        table, _ = read_table(str(data))
    if isinstance(budget, str):
        budget = parse_budget(budget)
    key = dataset_key(Path(data).expanduser() if Path(str(data)).exists() else table, desc)
    ledger = LastingLedger(key, budget, directory=ledger_dir, name=Path(str(data)).name)
    return ReleaseDoor(table, desc, ledger)


def curator_env(data: str | None, schema: str | None, budget: str | None,
                ledger_dir: str | None) -> dict[str, str]:
    """Check a deployment's inputs (opening its door once) and return the app's environment."""
    _check(data, schema, budget)
    open_door(data, schema, budget, ledger_dir)  # fails here, in the curator's terminal
    env = {ENV["data"]: str(Path(data).expanduser().resolve()),
           ENV["schema"]: str(Path(schema).expanduser().resolve()), ENV["budget"]: str(budget)}
    if ledger_dir:
        env[LEDGER_DIR_ENV] = str(Path(ledger_dir).expanduser().resolve())
    return env


def deployment_from_env(environ: dict[str, str] | None = None) -> Deployment | None:
    """The curator deployment the app was started with, or None (a normal dashboard)."""
    env = os.environ if environ is None else environ
    if not env.get(ENV["data"]):
        return None
    ledger_dir = env.get(LEDGER_DIR_ENV)
    return Deployment(Path(env[ENV["data"]]), Path(env[ENV["schema"]]),
                      parse_budget(env[ENV["budget"]]), Path(ledger_dir) if ledger_dir else None)
