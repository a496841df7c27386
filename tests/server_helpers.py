"""Helpers for the tests that start a real ``dpcore app`` server: port, health, sockets, stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request

import psutil


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, port: int, timeout: float = 60.0) -> bytes:
    """Poll ``/_stcore/health`` on 127.0.0.1 until it answers (its body) or ``timeout``/exit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                        timeout=2) as resp:
                if resp.status == 200:
                    return resp.read()
        except OSError:
            time.sleep(0.5)
    return b""


def process_tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants."""
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def listening_addresses(pid: int, port: int) -> set[str]:
    """IP addresses the process tree of ``pid`` listens on at ``port``."""
    found = set()
    for proc in process_tree(pid):
        conns = getattr(proc, "net_connections", None) or proc.connections  # psutil < 6
        for conn in conns(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port:
                found.add(conn.laddr.ip)
    return found


def answers(port: int) -> bool:
    """Whether anything accepts a TCP connection on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def gone(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def sigterm_and_wait(proc: subprocess.Popen, tree: list[psutil.Process],
                     timeout: float = 30.0) -> int:
    """``kill PID`` (SIGTERM to that one process, not its group); its exit status.

    Then waits (up to ``timeout``) for every process of ``tree`` (taken while it served) to end.
    """
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=timeout)
    psutil.wait_procs([p for p in tree if p.pid != proc.pid], timeout=timeout)
    return code


def kill_group(proc: subprocess.Popen) -> None:
    """Clean-up after a failed test: the whole session started with ``start_new_session``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # also any child its exit left behind
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)
