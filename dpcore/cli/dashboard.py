"""``dpcore app``: start the Streamlit dashboard (``app.py`` of the checkout or of the wheel),
on 127.0.0.1 unless ``--host`` says otherwise, optionally as a curator deployment locked in
release mode (``--private``, ``--schema``, ``--budget``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from dpcore.cli.common import _progress
from dpcore.cli.ledger_curator import deployment_options
from dpcore.core.errors import CLIError


def app_path() -> Path:
    """``app.py`` of the checkout dpcore runs from, else the one the installed wheel carries."""
    from dpcore.data.datasets import resource_root

    return resource_root() / "app.py"


#: Addresses that serve this machine only (the dashboard's default: 127.0.0.1).
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _app_url(host: str, port: int) -> str:
    shown = "localhost" if host in LOCAL_HOSTS or host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"


def _serve(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run the server in place of this process (POSIX ``exec``).

    Then ``kill`` (SIGTERM) or Ctrl-C (SIGINT) on ``dpcore app`` reaches Streamlit itself, which
    shuts down; a child would keep serving the loaded (possibly private) table after its parent
    was gone. Without ``exec`` (Windows) the server runs as a child waited for.
    """
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.chdir(cwd)
        os.execve(cmd[0], cmd, env)  # returns only by raising OSError
    try:
        return subprocess.call(cmd, cwd=cwd, env=env)
    except KeyboardInterrupt:
        return 0


def cmd_app(args: argparse.Namespace) -> int:
    app = app_path()
    if not app.is_file():
        raise CLIError(f"the dashboard is missing: {app} not found (reinstall dpcore, or run it "
                       "from the source checkout)")
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
           "--server.address", args.host,
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    env = dict(os.environ)
    if args.private or args.schema or args.budget:
        from dpcore.release.curator import curator_env

        opts = deployment_options(args)
        opts.pop("analyst_token", None)
        env |= curator_env(args.private, args.schema, args.budget, args.ledger_dir, **opts)
        _warn_without_analysts(env, args.ledger_dir)
        _progress(args, "curator deployment: locked in release mode on "
                        f"{Path(args.private).name}, data set "
                        f"'{env['DPCORE_PRIVATE_DATASET']}' (budget {args.budget}"
                        f"{'; random DP enabled' if opts['allow_random_dp'] else ''})")
    print(f"dpcore dashboard: {_app_url(args.host, args.port)}", file=sys.stderr, flush=True)
    if args.host not in LOCAL_HOSTS:
        print(f"dpcore: warning: serving on {args.host}: other machines on the network can "
              "reach the dashboard (the default, 127.0.0.1, serves this machine only)",
              file=sys.stderr, flush=True)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return _serve(cmd, app.parent, env)




def _warn_without_analysts(env: dict[str, str], ledger_dir: str | None) -> None:
    """A curator deployment admits named analysts only: say so when none can log in yet."""
    from dpcore.privacy.ledger import LastingLedger, named_key

    name = env["DPCORE_PRIVATE_DATASET"]
    secrets = [Path(".streamlit/secrets.toml"), app_path().parent / ".streamlit/secrets.toml",
               Path.home() / ".streamlit/secrets.toml"]
    if any(p.is_file() and "[auth" in p.read_text(errors="replace") for p in secrets):
        return  # OpenID Connect: analysts are the identities the curator granted
    if not LastingLedger(named_key(name), directory=ledger_dir).analysts():
        print(f"dpcore: warning: no analyst can log in yet: grant one with `dpcore ledger grant "
              f"NAME --dataset {name} --epsilon E` (the server reads new grants at once)",
              file=sys.stderr, flush=True)
