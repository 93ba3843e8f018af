"""The generated test systems (contactfmu.family) by size and tolerance: the adaptive master's wall
time, steps and error against the monolithic reference, beside a monolithic solver's error at the
same tolerance.

    python benchmarks/family.py [--fmus DIR] [--out FILE] [--sizes 3 10] [--seeds 1 2 3]
                                [--rtols 1e-4 1e-5 1e-6] [--topologies chain tree loop]
                                [--stop 1.0] [--budget 300] [--scheme adaptive|multirate]

The defaults are the tolerance study (benchmarks/family_results.json); the size study is
``--sizes 3 10 22 47 97 --seeds 1 --rtols 1e-4 --topologies chain --budget 240
--out benchmarks/family_sizes.json``, and with ``--scheme multirate --out
benchmarks/family_sizes_multirate.json`` the same by partitioned steps.

For every topology, number of bodies and seed the system is generated (every link and body kind),
its reference solved (LSODA, rtol 1e-10, every event located: contactfmu.family.reference), and for
every rtol (atol = rtol*1e-2):

* the co-simulation from the FMI 2.0 FMUs by the default (adaptive) master (or --scheme), in this process:
  wall time, accepted and rejected steps, fmi2DoStep calls per FMU, wall time per FMU and
  simulated second, and its error: max |y - y_ref| over the 0.002 s recording grid divided by the
  range of y_ref, for every body's s and v (the worst position, the worst velocity);
* the monolithic model solved by LSODA at the same rtol and atol (the same laws, events located):
  its error measured the same way, what a monolithic solver leaves at that tolerance.

A run whose co-simulation takes longer than --budget seconds of wall time is cut there and says
so (its cost per FMU and simulated second then over the part run). Results are written as JSON
(default benchmarks/family_results.json) and printed as a table. Speed is reported, never
asserted.
"""

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from contactfmu.family import build, generate, reference  # noqa: E402


def worst(errors, kind):
    values = [v for k, v in errors.items() if k.endswith("." + kind)]
    return max(values) if values else 0.0


def measure(spec, rtols, fmu_dir, budget, scheme="adaptive"):
    grid = np.linspace(0.0, spec.stop_time, int(round(spec.stop_time / 0.002)) + 1)
    t0 = time.perf_counter()
    ref = reference.solve(spec, t_eval=grid)
    ref_wall = time.perf_counter() - t0
    names = build.signals(spec)
    rows = []
    for rtol in rtols:
        t0 = time.perf_counter()
        mono = reference.solve(spec, t_eval=grid, rtol=rtol, atol=rtol * 1e-2)
        mono_wall = time.perf_counter() - t0
        mono_err = build.errors({"time": grid, **mono.at(grid)}, ref, names)
        system = build.system(spec, fmu_dir)
        cut = {}

        def progress(t, start=time.perf_counter()):
            if time.perf_counter() - start > budget:
                cut["at"] = t
                raise TimeoutError

        t0 = time.perf_counter()
        try:
            result = system.simulate(
                spec.stop_time,
                rtol=rtol,
                atol=rtol * 1e-2,
                output_interval=0.002,
                outputs=names,
                progress=progress,
                scheme=scheme,
            )
        except TimeoutError:
            cost = 1e6 * budget / (spec.fmus * cut["at"]) if cut["at"] > 0 else None
            rows.append(
                dict(rtol=rtol, cut_at=cut["at"], budget=budget, us_per_fmu_and_second=cost)
            )
            print(f"    rtol {rtol:g}: cut at t = {cut['at']:.4g} s after {budget} s", flush=True)
            continue
        wall = time.perf_counter() - t0
        err = build.errors(result, ref, names)
        accepted = sum(1 for x in result.steps if x.accepted)
        # (a multirate region's calls counted by the FMUs that made them: StepRecord.fmus)
        calls = sum(x.calls * (x.fmus or spec.fmus) for x in result.steps) / spec.fmus
        row = dict(
            rtol=rtol,
            wall=wall,
            accepted=accepted,
            rejected=len(result.steps) - accepted,
            dosteps_per_fmu=calls,
            us_per_fmu_and_second=1e6 * wall / (spec.fmus * spec.stop_time),
            error_s=worst(err, "s"),
            error_v=worst(err, "v"),
            worst_signal=max(err, key=err.get),
            lsoda_error_s=worst(mono_err, "s"),
            lsoda_error_v=worst(mono_err, "v"),
            lsoda_wall=mono_wall,
        )
        rows.append(row)
        print(
            f"    rtol {rtol:g}: {wall:7.2f} s, {accepted} + {row['rejected']} steps, "
            f"{row['us_per_fmu_and_second']:.0f} us per FMU and s; error s {row['error_s']:.1e}, "
            f"v {row['error_v']:.1e} (LSODA at this rtol: {row['lsoda_error_s']:.1e}, "
            f"{row['lsoda_error_v']:.1e})",
            flush=True,
        )
    return dict(
        system=spec.describe(),
        seed=spec.seed,
        topology=spec.topology,
        bodies=len(spec.bodies),
        fmus=spec.fmus,
        events=len(ref.events),
        reference_wall=ref_wall,
        runs=rows,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fmus", default=str(ROOT / "fmus"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "family_results.json"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6])
    parser.add_argument("--topologies", nargs="+", default=["chain", "tree", "loop"])
    parser.add_argument("--stop", type=float, default=1.0)
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--scheme", default="adaptive", choices=["adaptive", "multirate"])
    args = parser.parse_args(argv)
    out = []
    for topology in args.topologies:
        for size in args.sizes:
            for seed in args.seeds:
                spec = dataclasses.replace(
                    generate(seed, bodies=size, topology=topology), stop_time=args.stop
                )
                print(spec.describe(), flush=True)
                out.append(measure(spec, args.rtols, args.fmus, args.budget, args.scheme))
                Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
