"""Parameter study: restitution of an ElastoGap impact over stiffness c and damping d (dask.distributed).

A 1 kg mass hits a wall at 1 m/s through an ElastoGap (Fixed -- ElastoGap -- Mass FMUs, the plain
law, m_a = m_b = 0; the contact starts inside a communication step), on a grid of c = 1e3 .. 1e6 N/m
and d = 1 .. 200 N.s/m: one co-simulation per grid point at a fixed step (default 1e-4 s, first
derivatives passed), run by contactfmu.study on a LocalCluster (--workers, default one per CPU) or
a running scheduler (--scheduler ADDR). Each run's restitution (speed after / speed before the
impact) is compared with the monolithic solution of the MSL ElastoGap law (contactfmu.monolithic,
scipy DOP853 at rtol 1e-12). Writes ElastoGapRestitution.csv (one row per run: c, d, restitution,
wall time, status), .json (the study) and .png: heat maps of the relative error and of the
monolithic restitution. Check: the relative error is within 1 % at every grid point.
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import (
    examples,  # noqa: E402
    monolithic,  # noqa: E402  (the MSL law written out independently of the FMUs' code)
    plots,  # noqa: E402
)
from contactfmu.cosim import System  # noqa: E402
from contactfmu.study import Metric, Study, grid  # noqa: E402

NAME = "ElastoGapRestitution"
M, V0 = 1.0, 1.0  # the body [kg] and its speed towards the wall [m/s]
GAP = 1.05e-3  # distance to the contact at the start [m]: the contact starts at t = 1.05 ms
C = [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]  # N/m
D = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]  # N.s/m
QUICK_C, QUICK_D = [1e4, 1e5, 1e6], [2.0, 20.0]  # --quick: 6 runs
TOLERANCE = 1e-2  # relative error of the restitution allowed at every grid point


def build_system(fmu):
    """The impact: wall (Fixed) -- gap (ElastoGap, c and d set per run) -- mass (Mass, 1 kg at -1 m/s)."""
    s = System()
    s.add("wall", fmu["Fixed"], s0=0.0)
    s.add("gap", fmu["ElastoGap"], c=1e5, d=20.0)
    s.add("mass", fmu["Mass"], m=M, s_start=GAP, v_start=-V0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    return s


def restitution(result):
    """Speed after the impact over the speed before it; an error if the mass is still in contact."""
    if result["gap.contact"][-1] or not result["mass.s"][-1] > 0.0:
        raise ValueError(f"the mass is still in contact at the stop time {result.time[-1]:g} s")
    return -result["mass.v"][-1] / result["mass.v"][0]


def stop_time(values):
    """Each run ends two undamped contact periods after the contact starts (+5 ms)."""
    return {"stop_time": GAP / V0 + 4 * math.pi * math.sqrt(M / values["gap.c"]) + 5e-3}


def reference(c, d):
    return monolithic.elastogap_impact(m=M, c=c, d=d, v0=V0)["restitution"]


def run(out="results", step=1e-4, fmu_dir=None, workers=None, scheduler=None, quick=False):
    """Run the study; returns (its table with the columns reference and relative_error added, wall time
    in s, the Study)."""
    fmu = examples.fmus(fmu_dir or examples.ROOT / "fmus", ["Fixed", "ElastoGap", "Mass"])
    runs = grid(
        {"gap.c": QUICK_C if quick else C, "gap.d": QUICK_D if quick else D}, options=stop_time
    )
    metric = Metric("restitution", restitution, ["mass.v", "mass.s", "gap.contact"], unit="1")
    study = Study(build_system, runs, [metric], fmus=fmu, options={"step": step}, name=NAME)
    out = Path(out)
    t0 = time.perf_counter()
    table = study.run(
        out / f"{NAME}.csv", workers=workers, scheduler=scheduler, resume=False, progress=True
    )
    wall = time.perf_counter() - t0
    table["reference"] = [reference(c, d) for c, d in zip(table["gap.c"], table["gap.d"])]
    table["relative_error"] = table["restitution"] / table["reference"] - 1.0
    plot(table, out / f"{NAME}.png", step, runs)
    return table, wall, study


def plot(table, path, step, runs):
    """Heat maps over (c, d): log10 of the relative error of the co-simulated restitution (cells
    labelled with the signed error), and the monolithic restitution itself."""
    from contactfmu.study.plot import cell_edges

    c, d = runs.axes["gap.c"], runs.axes["gap.d"]
    at = {(x, y): k for k, (x, y) in enumerate(zip(table["gap.c"], table["gap.d"]))}
    err = np.array([[table["relative_error"].iloc[at[(x, y)]] for x in c] for y in d])
    ref = np.array([[table["reference"].iloc[at[(x, y)]] for x in c] for y in d])
    fig, (ax1, ax2) = plots.figure(1, 2, figsize=(13, 5.4))
    plt = plots.pyplot()
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("lightgrey")
    magnitude = np.log10(np.maximum(np.abs(err), 1e-12))
    mesh = ax1.pcolormesh(
        cell_edges(c, True),
        cell_edges(d, True),
        np.ma.masked_invalid(np.where(np.isfinite(err), magnitude, np.nan)),
        cmap=cmap,
    )
    fig.colorbar(mesh, ax=ax1, label="log10 |e_cosim / e_monolithic - 1| [-]")
    for i, y in enumerate(d):
        for j, x in enumerate(c):
            text = "failed" if not np.isfinite(err[i, j]) else f"{100 * err[i, j]:+.2g} %"
            ax1.text(
                x,
                y,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if magnitude[i, j] < -3.5 else "black",
            )
    ax1.set_title(
        f"relative error of the restitution, co-simulation at {step:g} s vs monolithic", fontsize=10
    )
    mesh = ax2.pcolormesh(
        cell_edges(c, True), cell_edges(d, True), ref, cmap="magma", vmin=0.0, vmax=1.0
    )
    fig.colorbar(mesh, ax=ax2, label="restitution e = v_after / v_before [-]")
    for i, y in enumerate(d):
        for j, x in enumerate(c):
            ax2.text(
                x,
                y,
                f"{ref[i, j]:.3f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if ref[i, j] < 0.6 else "black",
            )
    ax2.set_title("monolithic restitution (scipy, MSL ElastoGap law)", fontsize=10)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(c, [f"{x:g}" for x in c])
        ax.set_yticks(d, [f"{y:g}" for y in d])
        ax.minorticks_off()
        ax.set_xlabel("stiffness gap.c [N/m]")
        ax.set_ylabel("damping gap.d [N.s/m]")
    fig.suptitle(
        f"ElastoGap impact restitution over (c, d): {M:g} kg at {V0:g} m/s, Fixed -- ElastoGap -- Mass "
        f"FMUs, {len(table)} runs (contactfmu.study)"
    )
    plots.save(fig, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument(
        "--step", type=float, default=1e-4, help="fixed communication step in s (default 1e-4)"
    )
    parser.add_argument("--fmus", default=str(examples.ROOT / "fmus"))
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: one per CPU; 0: serial)",
    )
    parser.add_argument("--scheduler", default=None, help="address of a running dask scheduler")
    parser.add_argument(
        "--quick", action="store_true", help=f"a {len(QUICK_C)} x {len(QUICK_D)} grid"
    )
    args = parser.parse_args(argv)
    if not args.step > 0:
        parser.error(f"--step must be > 0, got {args.step!r}")
    table, wall, study = run(
        args.out, args.step, args.fmus, args.workers, args.scheduler, args.quick
    )
    checks = examples.Checks()
    for c in study.runs.axes["gap.c"]:
        rows = table[table["gap.c"] == c]
        worst = rows["relative_error"].abs().max() if (rows["status"] == "ok").all() else math.nan
        checks.append(
            examples.Check(
                f"c = {c:g} N/m: largest |relative error| over d = "
                f"{rows['gap.d'].min():g} .. {rows['gap.d'].max():g} N.s/m",
                worst,
                0.0,
                TOLERANCE,
            )
        )
    return examples.summarize_study(
        NAME,
        table,
        wall,
        args.out,
        (f"restitution vs the monolithic MSL law (relative, {TOLERANCE:g})", checks),
    )


if __name__ == "__main__":
    examples.run_main(main)
