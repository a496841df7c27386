"""A curator's deployment: a private file, its public description and budget, behind the door.

``dpcore app --private data.csv --schema schema.json --budget 2,1e-6 --dataset cities`` checks
the inputs (here, in the curator's terminal, where messages about the file may be explicit),
then passes them to the Streamlit process in environment variables (:data:`ENV`). The app reads
them back with :func:`deployment_from_env` and opens the same
:class:`~dpcore.release.door.ReleaseDoor` for every session, over the lasting ledger, locked in
release mode.

The budget belongs to the data set's *name* (``--dataset``; by default the file's name without
its extension), not to the file's bytes: the same people's data re-encoded, re-ordered, with
rows appended or described anew keeps its budget. A new description is recorded in the ledger
(:meth:`~dpcore.privacy.ledger.LastingLedger.describe`). Random-DP releases (the sensitivity
sampler) are refused unless the curator enables them (``--random-dp``, which needs a budget with
γ): random DP bounds nothing in the worst case. A new deployment's ledger refuses by the Rényi
filter alone (``accountant="filter"``, :class:`~dpcore.privacy.guarantees.PrivacyLedger`): its
analysts choose each release after seeing the previous ones, and that filter is the total that
stays valid then.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpcore.core.errors import LedgerError
from dpcore.privacy.guarantees import Guarantee, RandomDP
from dpcore.privacy.ledger import LEDGER_DIR_ENV, LastingLedger, named_key, parse_budget
from dpcore.release.schema import PublicDescription

__all__ = ["ENV", "Deployment", "curator_env", "dataset_name", "deployment_from_env",
           "open_door", "release_ledger", "table_units"]

#: Environment variables of a curator deployment (the ledger directory: ``DPCORE_LEDGER_DIR``).
ENV = {"data": "DPCORE_PRIVATE_DATA", "schema": "DPCORE_PRIVATE_SCHEMA",
       "budget": "DPCORE_PRIVATE_BUDGET", "dataset": "DPCORE_PRIVATE_DATASET",
       "random_dp": "DPCORE_ALLOW_RANDOM_DP"}


@dataclass(frozen=True)
class Deployment:
    """What a curator started the app with (paths and budget: public to the curator only)."""

    data: Path
    schema: Path
    budget: Guarantee
    ledger_dir: Path | None
    dataset: str = ""
    allow_random_dp: bool = False


def dataset_name(data: str | Path, dataset: str | None = None) -> str:
    """The data set's name: ``dataset``, else the file's name without its extension."""
    if dataset:
        return str(dataset).strip()
    p = Path(str(data))
    return p.name.split(".")[0] or p.name


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
              ledger_dir: str | Path | None = None, *, table=None, dataset: str | None = None,
              allow_random_dp: bool = False, analyst_token: str | None = None,
              accountant: str = "filter"):
    """The :class:`~dpcore.release.door.ReleaseDoor` of a private file over its lasting ledger.

    ``budget`` may be None when the data set already has a ledger (its stored budget is used).
    ``dataset`` names the data set (default: :func:`dataset_name` of the file); the ledger
    records the description and any change of it. ``allow_random_dp``: accept random-DP
    releases (needs a budget with γ). ``analyst_token``: spend as that named analyst.
    ``accountant``: how a *new* data set's DP account refuses (fixed with its budget).
    """
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.runconfig import read_table

    desc = PublicDescription.from_json(Path(schema).expanduser().read_text())
    if table is None:
        table, _ = read_table(str(data))
    desc.prepare(table)  # a description that does not fit the table fails before any ledger
    if isinstance(budget, str):
        budget = parse_budget(budget)
    name = dataset_name(data, dataset)
    ledger = release_ledger(name, desc, budget, ledger_dir, analyst_token=analyst_token,
                            accountant=accountant)
    if allow_random_dp and not isinstance(ledger.budget, RandomDP):
        raise ValueError(f"--random-dp needs a budget with γ (--budget EPS,DELTA,GAMMA); data "
                         f"set '{name}' has {ledger.budget}")
    return ReleaseDoor(table, desc, ledger, allow_random_dp=allow_random_dp)


def release_ledger(name: str, description, budget: Guarantee | None,
                   ledger_dir: str | Path | None = None, *, accountant: str = "tight",
                   analyst_token: str | None = None,
                   keep_stored_budget: bool = False) -> LastingLedger:
    """The lasting ledger of the data set called ``name``: the one place a release's ledger key
    is made (a curator deployment's ``--dataset``, or the dashboard's own release mode: a
    sample's key, an upload's file name). The budget belongs to the name, never to the bytes:
    the same data re-encoded, re-ordered or with rows appended keeps its budget, and a new
    description is recorded (:meth:`~dpcore.privacy.ledger.LastingLedger.describe`).

    ``keep_stored_budget``: where the data set's ledger already holds releases under another
    budget, use the stored one (the dashboard, whose sidebar budget is only a first-use
    default) instead of refusing (a curator, who must reset to change it).
    """
    key = named_key(dataset_name(name))
    opts = {"directory": ledger_dir, "name": dataset_name(name), "description": description,
            "analyst_token": analyst_token, "accept_description": True,
            "accountant": accountant}
    try:
        return LastingLedger(key, budget, **opts)
    except LedgerError:
        raise
    except ValueError:
        if not keep_stored_budget or budget is None:
            raise
        return LastingLedger(key, None, **opts)  # its releases were charged to that budget


#: Released outputs that are points in the description's space (centred by the mechanisms).
POINT_NAMES = ("centers", "mean")


def table_units(output: dict | None, description) -> dict | None:
    """A kept output (JSON, :mod:`dpcore.privacy.ledger_outputs`) in the table's units: the
    description's centre added to its points (post-processing); other values as released."""
    if output is None or description is None:
        return output
    if not isinstance(description, PublicDescription):
        description = PublicDescription.from_dict(description)
    centre = description.center_array()
    out = {}
    for name, value in output.items():
        if name in POINT_NAMES and value is not None:
            pts = np.atleast_2d(np.asarray(value, dtype=float)) + centre
            value = pts.tolist() if np.ndim(value) > 1 else pts[0].tolist()
        out[name] = value
    return out


def curator_env(data: str | None, schema: str | None, budget: str | None,
                ledger_dir: str | None, *, dataset: str | None = None,
                allow_random_dp: bool = False) -> dict[str, str]:
    """Check a deployment's inputs (opening its door once) and return the app's environment."""
    _check(data, schema, budget)
    # fails here, in the curator's terminal; records a new description of the named data set
    open_door(data, schema, budget, ledger_dir, dataset=dataset, allow_random_dp=allow_random_dp)
    env = {ENV["data"]: str(Path(data).expanduser().resolve()),
           ENV["schema"]: str(Path(schema).expanduser().resolve()), ENV["budget"]: str(budget),
           ENV["dataset"]: dataset_name(data, dataset),
           ENV["random_dp"]: "1" if allow_random_dp else "0"}
    if ledger_dir:
        env[LEDGER_DIR_ENV] = str(Path(ledger_dir).expanduser().resolve())
    return env


def deployment_from_env(environ: dict[str, str] | None = None) -> Deployment | None:
    """The curator deployment the app was started with, or None (a normal dashboard)."""
    env = os.environ if environ is None else environ
    if not env.get(ENV["data"]):
        return None
    ledger_dir = env.get(LEDGER_DIR_ENV)
    data = Path(env[ENV["data"]])
    return Deployment(data, Path(env[ENV["schema"]]), parse_budget(env[ENV["budget"]]),
                      Path(ledger_dir) if ledger_dir else None,
                      dataset_name(data, env.get(ENV["dataset"])),
                      env.get(ENV["random_dp"], "0").strip().lower() in ("1", "true", "yes"))
