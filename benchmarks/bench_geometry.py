"""Cost of overflow safety in dpcore.data.geometry, printed as a markdown table.

* ``row_norms``: the overflow-exact version against the plain ``sqrt(einsum)`` it replaced
  (the reference, same run): the check is one comparison on the (n,) result, so the ratio
  should stay near 1.
* ``clip_to_ball`` when no row is clipped (the declared radius holds the data, the usual case):
  the new version returns the input without a copy; the reference copies first, as before.
  Peak extra memory is measured with ``tracemalloc``.
* ``clip_to_ball`` with 1 % of the rows clipped (both copy).

Run: ``python benchmarks/bench_geometry.py [--rows 70000 --cols 784]`` (MNIST's shape).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from dpcore.data.geometry import clip_to_ball, row_norms


def reference_row_norms(X: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def reference_clip(X: np.ndarray, radius: float) -> np.ndarray:
    """The previous clip_to_ball: copy, then scale the rows beyond the radius."""
    X = np.array(X, dtype=float, copy=True)
    norms = reference_row_norms(X)
    over = norms > radius
    if np.any(over):
        X[over] *= (radius / norms[over])[:, None]
    return X


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=70_000)
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    X = np.random.default_rng(0).normal(size=(args.rows, args.cols))
    big = float(reference_row_norms(X).max()) * 1.01
    q99 = float(np.quantile(reference_row_norms(X), 0.99))
    rows = [
        ("row_norms", lambda: row_norms(X), lambda: reference_row_norms(X)),
        ("clip_to_ball, nothing clipped", lambda: clip_to_ball(X, big),
         lambda: reference_clip(X, big)),
        ("clip_to_ball, 1 % clipped", lambda: clip_to_ball(X, q99),
         lambda: reference_clip(X, q99)),
    ]
    print(f"n = {args.rows}, d = {args.cols} ({X.nbytes / 2**20:.0f} MiB), best of "
          f"{args.repeat}\n")
    print("| operation | dpcore (s) | reference (s) | ratio | dpcore peak MiB | "
          "reference peak MiB |")
    print("|---|---|---|---|---|---|")
    for name, new, ref in rows:
        t_new, t_ref = best_of(new, args.repeat), best_of(ref, args.repeat)
        print(f"| {name} | {t_new:.4f} | {t_ref:.4f} | {t_new / t_ref:.2f} | "
              f"{peak_mib(new):.1f} | {peak_mib(ref):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
