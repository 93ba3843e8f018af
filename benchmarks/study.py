"""Parameter study on dask.distributed against the same runs in one process: speedup and identity.

    python benchmarks/study.py [--workers 2] [--runs 16] [--wait-load 0.5] [--out benchmarks/study_results.json]

The study: the model of examples/msl_preload.py (its build_system), 16 runs (Latin hypercube, seed 0)
over spring.c 1.6e4 .. 2.4e4 N/m and spring.s_rel0 24.5 .. 25.5 mm, each 0 to 25 s with the
project's default master (adaptive steps at rtol 1e-4, about 1 s of one core per run), metrics max,
final and mean of spool.s and the largest force on plate A's stop, trajectories recorded every 50 ms
(dense output). It runs

  1. serially in this process (Study.run(workers=0)),
  2. on a LocalCluster of --workers worker processes (one thread each) started beforehand:
     Study.run(client=...), from submitting the first run to the last row (the workers' first runs
     load fmpy and the FMUs),
  3. on a LocalCluster that the study starts and closes itself (Study.run(workers=N)): the whole
     cost a user sees.

Speedup = serial wall time / cluster wall time. Goal: at least 1.7 for 2. with 2 workers on a
2-core machine, and every metric and every trajectory of the cluster runs equal to the serial
runs' bit for bit. Wall times depend on the machine's load: the 1-minute load average is recorded
before and after each phase (--wait-load L waits until it is below L before starting, at most
--patience seconds, default 600). Prints the figures, writes them to --out, exits 1 if a goal fails.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from contactfmu import examples  # noqa: E402
from contactfmu.cosim import read_csv  # noqa: E402
from contactfmu.study import Study, samples  # noqa: E402

RANGES = {"spring.c": (1.6e4, 2.4e4), "spring.s_rel0": (0.0245, 0.0255)}
OPTIONS = {"output_interval": 0.05}  # the default master (adaptive), recorded every 50 ms
METRICS = ["max:spool.s", "final:spool.s", "mean:spool.s", "absmax:outerContactA.f"]
STOP = 25.0
GOAL_SPEEDUP = 1.7


def load():
    return round(os.getloadavg()[0], 2)


def wait_for_load(limit, patience=600.0):
    """Wait until the 1-minute load average is below `limit` (at most `patience` s); returns it."""
    t0 = time.monotonic()
    while load() >= limit and time.monotonic() - t0 < patience:
        time.sleep(15.0)
    return load()


def timed(fn):
    before = load()
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0, {"before": before, "after": load()}


def same(a, b, metrics, dir_a, dir_b):
    """(metrics equal bit for bit, every trajectory equal bit for bit, number of trajectories compared)."""
    equal = np.array_equal(a[metrics].to_numpy(), b[metrics].to_numpy(), equal_nan=True)
    n, traj = 0, True
    for run_id in a["run_id"]:
        ra, rb = read_csv(dir_a / f"{run_id}.csv"), read_csv(dir_b / f"{run_id}.csv")
        traj = traj and ra.names == rb.names and np.array_equal(ra.values, rb.values)
        n += 1
    return bool(equal), bool(traj), n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument(
        "--wait-load",
        type=float,
        default=None,
        metavar="L",
        help="wait until the 1-minute load average is below L before starting",
    )
    parser.add_argument(
        "--patience",
        type=float,
        default=600.0,
        help="longest wait for --wait-load in s (default 600)",
    )
    parser.add_argument("--fmus", default=str(ROOT / "fmus"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "study_results.json"))
    args = parser.parse_args(argv)
    from distributed import Client

    from contactfmu.study.cluster import local_cluster

    fmu = examples.fmus(
        args.fmus, ["Fixed", "ElastoGap", "Mass", "Spring", "Damper", "Force", "Sine"]
    )
    study = Study(
        ROOT / "examples" / "msl_preload.py",
        samples(args.runs, RANGES, "lhs", 0),
        METRICS,
        stop_time=STOP,
        fmus=fmu,
        options=OPTIONS,
        name="PreLoadBenchmark",
    )
    metrics = [m.name for m in study.metrics]
    start_load = (
        wait_for_load(args.wait_load, args.patience) if args.wait_load is not None else load()
    )
    tmp = Path(tempfile.mkdtemp(prefix="contactfmu_study_bench_"))
    serial, t_serial, l_serial = timed(
        lambda: study.run(tmp / "serial.csv", workers=0, trajectories=True, progress=False)
    )
    t0 = time.perf_counter()
    cluster = local_cluster(args.workers, str(tmp / "dask"))
    client = Client(cluster)
    client.wait_for_workers(args.workers)
    t_start = time.perf_counter() - t0
    try:
        parallel, t_cluster, l_cluster = timed(
            lambda: study.run(tmp / "cluster.csv", client=client, trajectories=True, progress=False)
        )
    finally:
        client.close()
        cluster.close()
    own, t_own, l_own = timed(
        lambda: study.run(tmp / "own.csv", workers=args.workers, trajectories=True, progress=False)
    )
    equal, traj, n = same(serial, parallel, metrics, tmp / "serial.runs", tmp / "cluster.runs")
    equal_own, traj_own, _ = same(serial, own, metrics, tmp / "serial.runs", tmp / "own.runs")
    ok = all((t["status"] == "ok").all() for t in (serial, parallel, own))
    res = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "study": {
            "model": "examples/msl_preload.py",
            "runs": args.runs,
            "stop_time": STOP,
            "options": OPTIONS,
            "ranges": RANGES,
            "metrics": metrics,
            "workers": args.workers,
        },
        "load_at_start": start_load,
        "serial": {
            "wall": round(t_serial, 3),
            "load": l_serial,
            "run_wall_sum": round(float(serial["wall_time"].sum()), 3),
        },
        "cluster": {
            "wall": round(t_cluster, 3),
            "load": l_cluster,
            "start": round(t_start, 3),
            "run_wall_sum": round(float(parallel["wall_time"].sum()), 3),
            "workers_used": int(parallel["worker"].nunique()),
        },
        "cluster_started_by_the_study": {"wall": round(t_own, 3), "load": l_own},
        "speedup": round(t_serial / t_cluster, 3),
        "speedup_with_cluster_start": round(t_serial / t_own, 3),
        "identical": {
            "metrics": equal and equal_own,
            "trajectories": traj and traj_own,
            "compared": n,
        },
        "all_ok": bool(ok),
    }
    res["goals"] = {
        f"speedup >= {GOAL_SPEEDUP} ({args.workers} workers)": res["speedup"] >= GOAL_SPEEDUP,
        "identical to the serial runs (metrics and trajectories)": equal
        and traj
        and equal_own
        and traj_own,
        "every run ok": bool(ok),
    }
    print(
        f"study: {args.runs} runs of MSL PreLoad (0 to {STOP:g} s, adaptive master), {os.cpu_count()} CPUs"
    )
    print(
        f"  serial, one process:          {t_serial:7.2f} s (runs' own wall times sum to "
        f"{res['serial']['run_wall_sum']:.2f} s), load {l_serial['before']} -> {l_serial['after']}"
    )
    print(
        f"  LocalCluster, {args.workers} workers:      {t_cluster:7.2f} s (cluster start {t_start:.2f} s not "
        f"included), load {l_cluster['before']} -> {l_cluster['after']}: speedup {res['speedup']:.2f}"
    )
    print(
        f"  started by the study itself: {t_own:7.2f} s (start and close included), load {l_own['before']} -> "
        f"{l_own['after']}: speedup {res['speedup_with_cluster_start']:.2f}"
    )
    print(
        f"  identical to the serial runs bit for bit: metrics {equal and equal_own}, {n} trajectories "
        f"{traj and traj_own}"
    )
    for goal, passed in res["goals"].items():
        print(f"  goal {goal}: {'PASSED' if passed else 'FAILED'}")
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"-> {args.out}")
    return 0 if all(res["goals"].values()) else 1


if __name__ == "__main__":
    examples.run_main(main)
