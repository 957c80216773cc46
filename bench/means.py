#!/usr/bin/env python3
"""means.py ENGINE SAMPLES_CSV: per-point mean and SD of every measured sample in an aba
samples.csv, the way a short hand-written script would compute them; the bench times it
against `aba report` (bench/report.rs). ENGINE is `csv` (standard library) or `pandas`
(exit 3 when pandas is not installed).

Counts rows with status `ok` and phase `sample` (the synthetic directory has one done attempt
per point, so no journal is needed to select attempts). Prints one line per
(point, workload, case, metric): point, workload, case, metric, n, mean, sample SD.
"""
import sys


def with_csv(path):
    import csv
    import math

    groups = {}
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        col = {name: i for i, name in enumerate(header)}
        p, w, c, m = col["point"], col["workload"], col["case"], col["metric"]
        ph, st, v = col["phase"], col["status"], col["value"]
        for r in rows:
            if r[st] != "ok" or r[ph] != "sample":
                continue
            key = (r[p], r[w], r[c], r[m])
            acc = groups.get(key)
            if acc is None:
                acc = groups[key] = [0, 0.0, 0.0]
            # Welford's update: numerically stable mean and variance in one pass.
            x = float(r[v])
            acc[0] += 1
            d = x - acc[1]
            acc[1] += d / acc[0]
            acc[2] += d * (x - acc[1])
    out = sys.stdout
    for key, (n, mean, m2) in groups.items():
        sd = math.sqrt(m2 / (n - 1)) if n > 1 else 0.0
        out.write("\t".join(key) + f"\t{n}\t{mean:.9f}\t{sd:.9f}\n")


def with_pandas(path):
    try:
        import pandas as pd
    except ImportError:
        sys.exit(3)
    df = pd.read_csv(path, keep_default_na=False, dtype={"case": str})
    df = df[(df["status"] == "ok") & (df["phase"] == "sample")]
    df = df.assign(value=df["value"].astype(float))
    g = df.groupby(["point", "workload", "case", "metric"], sort=False)["value"]
    res = g.agg(["count", "mean", "std"]).reset_index()
    for r in res.itertuples(index=False):
        sys.stdout.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]}\t{r[5]:.9f}\t{r[6]:.9f}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("csv", "pandas"):
        sys.exit("usage: means.py csv|pandas SAMPLES_CSV")
    (with_csv if sys.argv[1] == "csv" else with_pandas)(sys.argv[2])
