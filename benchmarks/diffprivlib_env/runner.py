"""Run IBM diffprivlib's KMeans inside .venv-diffprivlib (called through subprocess).

Input: one JSON object on stdin, {"data": "<file>.npy", "k": int, "epsilon": float,
"bounds": [lower, upper], "seeds": [int, ...]}. Output: one JSON object on stdout,
{"versions": {...}, "runs": [{"seed", "seconds", "centers"}], "peak_rss_mib"}.
Bounds are the public per-feature box (a scalar pair applies to every feature), so diffprivlib
does not read them off the data (no PrivacyLeakWarning).
"""

import json
import resource
import sys
import time
import warnings

import numpy as np


def main() -> None:
    spec = json.load(sys.stdin)
    import diffprivlib
    import sklearn
    from diffprivlib.models import KMeans

    X = np.load(spec["data"])
    lo, hi = spec["bounds"]
    runs = []
    for seed in spec["seeds"]:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            km = KMeans(
                n_clusters=int(spec["k"]),
                epsilon=float(spec["epsilon"]),
                bounds=(float(lo), float(hi)),
                random_state=int(seed),
            ).fit(X)
        runs.append(
            {
                "seed": seed,
                "seconds": time.perf_counter() - t0,
                "centers": km.cluster_centers_.tolist(),
            }
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    versions = {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__}
    json.dump({"versions": versions, "runs": runs, "peak_rss_mib": peak}, sys.stdout)


if __name__ == "__main__":
    main()
