"""Run IBM diffprivlib's KMeans on a per-feature box inside .venv-diffprivlib (via subprocess).

Input: one JSON object on stdin, {"data": "<X>.npy", "bounds": "<lo_hi>.npy" (2 × d array),
"k": int, "epsilons": [float, ...], "seeds": [int, ...]}. Output: one JSON object on stdout,
{"versions": {...}, "runs": [{"epsilon", "seed", "seconds", "n_iter", "centers"}]}.
The box is public (declared by the caller), so diffprivlib reads nothing off the data.
"""

import json
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
    lo, hi = np.load(spec["bounds"])
    runs = []
    for eps in spec["epsilons"]:
        for seed in spec["seeds"]:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                km = KMeans(n_clusters=int(spec["k"]), epsilon=float(eps), bounds=(lo, hi),
                            random_state=int(seed)).fit(X)
            runs.append({"epsilon": eps, "seed": seed, "seconds": time.perf_counter() - t0,
                         "n_iter": int(km.n_iter_), "centers": km.cluster_centers_.tolist()})
    versions = {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__}
    json.dump({"versions": versions, "runs": runs}, sys.stdout)


if __name__ == "__main__":
    main()
