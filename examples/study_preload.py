"""Parameter study: the MSL PreLoad characteristic under a spread of spring constant and preload (Monte Carlo).

The model of msl_preload.py (its build_system) with the preload spring's constant spring.c spread
uniformly over 2e4 N/m +-20 % and its unstretched length spring.s_rel0 over 25 mm +-0.5 mm (the
preload compression between the plates' stops 1.0 .. 2.0 mm), 32 Monte Carlo samples (seed 1;
--samples, --seed), run by contactfmu.study on a LocalCluster (--workers) or a running scheduler
(--scheduler ADDR). Each run covers the first quarter period of the 0.01 Hz drive, 0 to 25 s, the
force rising from 0 to its 150 N peak (the loading branch of the characteristic), with the
project's default master (adaptive steps at rtol 1e-4, the same as msl_preload.py's, recorded at
its communication points, where the contact changes are located); --step H: the implicit
coupling at a fixed step H instead, recorded every 0.05 s.

Metrics per run: the drive force at which spring plate A lifts off its stop (outerContactA opens:
the preload the force overcomes) and the spool's travel at the 150 N peak. Both are compared with the
quasi-static solution of the example's geometry (contacts c_k = 1e6 N/m, compression at the stops
C0 = s_rel0 - 23.5 mm): lift-off at F = c*C0/(1 + c/c_k), travel x(F) = F/c - C0 + 2*F/c_k.
Writes PreLoadStudy.csv (one row per run), .json, the trajectories in PreLoadStudy.runs/ and
PreLoadStudy.png (the characteristics, histograms of the two metrics, their deviation from the
quasi-static values).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu.cosim import read_csv  # noqa: E402
from contactfmu.study import Metric, Study, samples  # noqa: E402

NAME = "PreLoadStudy"
EXAMPLE = Path(__file__).resolve().parent / "msl_preload.py"  # the model: its build_system(fmu)
C_SPRING, S_REL0 = 20e3, 0.025  # the example's preload spring: N/m, m
RANGES = {
    "spring.c": (0.8 * C_SPRING, 1.2 * C_SPRING),
    "spring.s_rel0": (S_REL0 - 5e-4, S_REL0 + 5e-4),
}
C_CONTACT = 1e6  # the example's ElastoGaps, N/m
LENGTH_AT_STOPS = 0.0235  # spring length with both plates at their stops (zero contact force), m
SPOOL_START = 0.01475  # spool.s at the start, m (inner contacts just closed)
F_PEAK, STOP = 150.0, 25.0  # the drive's amplitude (N) and a quarter period of 0.01 Hz (s)
OPTIONS = {}  # the default master: adaptive, recorded at its communication points
SIGNALS = ["spool.s", "force.f", "outerContactA.contact"]
TOL_FORCE = 0.2  # N: lift-off force vs quasi-static (measured at most 0.025 N, 8 samples)
TOL_TRAVEL = 2e-6  # m: travel at 150 N vs quasi-static (measured -0.4 .. -0.9 um)


def lift_off_force(result):
    """force.f where outerContactA opens after it first closed (mean of the samples around it)."""
    closed = result["outerContactA.contact"] > 0.5
    if not closed.any():
        raise ValueError("outerContactA never closed: plate A never reached its stop")
    first = int(np.argmax(closed))
    opened = np.flatnonzero(~closed[first:])
    if not len(opened):
        raise ValueError(
            f"plate A did not lift off its stop by {result.time[-1]:g} s "
            f"(largest force {result['force.f'].max():.4g} N)"
        )
    k = first + int(opened[0])
    return 0.5 * (result["force.f"][k - 1] + result["force.f"][k])


def travel(result):
    """spool.s at the largest drive force, from its start position."""
    return result["spool.s"][int(np.argmax(result["force.f"]))] - SPOOL_START


def quasi_static(c, s_rel0):
    """(lift-off force, travel at F_PEAK) of the quasi-static model: plates on stiff stops (C_CONTACT),
    the spool pushing plate A through innerContactA."""
    c0 = s_rel0 - LENGTH_AT_STOPS
    return c * c0 / (1.0 + c / C_CONTACT), F_PEAK / c - c0 + 2.0 * F_PEAK / C_CONTACT


def run(out="results", fmu_dir=None, n=32, seed=1, workers=None, scheduler=None, step=None):
    """Run the study; returns (its table with the quasi-static values added, wall time in s, study)."""
    fmu = examples.fmus(
        fmu_dir or examples.ROOT / "fmus",
        ["Fixed", "ElastoGap", "Mass", "Spring", "Damper", "Force", "Sine"],
    )
    metrics = [
        Metric("lift_off_force", lift_off_force, SIGNALS, unit="N"),
        Metric("travel", travel, SIGNALS, unit="m"),
    ]
    study = Study(
        EXAMPLE,
        samples(n, RANGES, "random", seed),
        metrics,
        stop_time=STOP,
        fmus=fmu,
        options={
            **OPTIONS,
            **({"scheme": "implicit", "step": step, "output_interval": 0.05} if step else {}),
        },
        name=NAME,
    )
    out = Path(out)
    t0 = time.perf_counter()
    table = study.run(
        out / f"{NAME}.csv",
        workers=workers,
        scheduler=scheduler,
        resume=False,
        trajectories=True,
        progress=True,
    )
    wall = time.perf_counter() - t0
    qs = [quasi_static(c, s) for c, s in zip(table["spring.c"], table["spring.s_rel0"])]
    table["lift_off_force_quasi_static"] = [q[0] for q in qs]
    table["travel_quasi_static"] = [q[1] for q in qs]
    plot(table, out, step)
    return table, wall, study


def plot(table, out, step):
    """The characteristics (spool travel over the drive force, colour: spring.c), histograms of the
    lift-off force and the travel at 150 N, and their deviations from the quasi-static values."""
    plt = plots.pyplot()
    fig, axes = plots.figure(2, 2, figsize=(12, 9))
    ax = axes[0, 0]
    ok = table[table["status"] == "ok"]
    norm = plt.Normalize(*RANGES["spring.c"])
    for _, row in ok.iterrows():
        r = read_csv(out / f"{NAME}.runs" / f"{row['run_id']}.csv")
        ax.plot(
            r["force.f"],
            (r["spool.s"] - SPOOL_START) * 1e3,
            lw=0.8,
            color=plt.cm.viridis(norm(row["spring.c"])),
        )
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=ax, label="spring.c [N/m]")
    ax.set_xlabel("drive force force.f [N]")
    ax.set_ylabel("spool travel spool.s - 14.75 mm [mm]")
    ax.set_title(f"preload characteristics of {len(ok)} runs (0 to {STOP:g} s)", fontsize=10)
    ax.grid(True, alpha=0.3)
    for ax, column, scale, unit, what in (
        (axes[0, 1], "lift_off_force", 1.0, "N", "lift-off force of plate A"),
        (axes[1, 0], "travel", 1e3, "mm", "spool travel at 150 N"),
    ):
        bins = np.histogram_bin_edges(
            np.concatenate([ok[column], ok[f"{column}_quasi_static"]]) * scale, 10
        )
        ax.hist(ok[column] * scale, bins=bins, color="C0", edgecolor="white", label="co-simulation")
        ax.hist(
            ok[f"{column}_quasi_static"] * scale,
            bins=bins,
            histtype="step",
            color="black",
            ls="--",
            label="quasi-static model",
        )
        ax.set_xlabel(f"{what} [{unit}]")
        ax.set_ylabel("runs")
        ax.grid(True, alpha=0.3)
    ax = axes[1, 1]
    ax.plot(
        ok["spring.c"],
        ok["lift_off_force"] - ok["lift_off_force_quasi_static"],
        "o",
        ms=4,
        label="lift-off force - quasi-static [N]",
    )
    ax.set_xlabel("spring.c [N/m]")
    ax.set_ylabel("lift-off force - quasi-static [N]")
    ax.grid(True, alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(
        ok["spring.c"],
        (ok["travel"] - ok["travel_quasi_static"]) * 1e6,
        "s",
        color="C1",
        ms=4,
        label="travel - quasi-static [um]",
    )
    ax2.set_ylabel("travel at 150 N - quasi-static [um]")
    ax.set_title("deviation from the quasi-static model", fontsize=10)
    plots.legend_below(
        fig,
        [
            *axes[0, 1].get_legend_handles_labels()[0],
            *ax.get_legend_handles_labels()[0],
            *ax2.get_legend_handles_labels()[0],
        ],
    )
    fig.suptitle(
        f"MSL PreLoad from FMUs, Monte Carlo over spring.c (+-20 %) and spring.s_rel0 (+-0.5 mm): "
        f"{len(table)} runs\n0 to {STOP:g} s (drive force 0 to {F_PEAK:g} N), "
        f"{f'implicit coupling at {step:g} s' if step else 'adaptive master'} (contactfmu.study)"
    )
    plots.save(fig, out / f"{NAME}.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--fmus", default=str(examples.ROOT / "fmus"))
    parser.add_argument(
        "--step",
        type=float,
        default=None,
        help="a fixed step of the implicit coupling in s (default: none, the adaptive master)",
    )
    parser.add_argument("--samples", type=int, default=32, help="Monte Carlo samples (default 32)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the samples (default 1)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: one per CPU; 0: serial)",
    )
    parser.add_argument("--scheduler", default=None, help="address of a running dask scheduler")
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error(f"--samples must be >= 1, got {args.samples}")
    if args.step is not None and not args.step > 0:
        parser.error(f"--step must be > 0, got {args.step!r}")
    table, wall, study = run(
        args.out, args.fmus, args.samples, args.seed, args.workers, args.scheduler, args.step
    )
    ok = table["status"] == "ok"
    force = examples.Checks(
        [
            examples.Check(
                f"largest |lift-off force - quasi-static| ({table['lift_off_force'][ok].min():.2f} .. "
                f"{table['lift_off_force'][ok].max():.2f} N)",
                (table["lift_off_force"] - table["lift_off_force_quasi_static"]).abs().max()
                if ok.all()
                else np.nan,
                0.0,
                TOL_FORCE,
                "N",
            )
        ]
    )
    travel_check = examples.Checks(
        [
            examples.Check(
                f"largest |travel at 150 N - quasi-static| ({1e3 * table['travel'][ok].min():.3f} .. "
                f"{1e3 * table['travel'][ok].max():.3f} mm)",
                (table["travel"] - table["travel_quasi_static"]).abs().max()
                if ok.all()
                else np.nan,
                0.0,
                TOL_TRAVEL,
                "m",
            )
        ]
    )
    return examples.summarize_study(
        NAME,
        table,
        wall,
        args.out,
        ("lift-off force vs the quasi-static model", force),
        ("travel vs the quasi-static model", travel_check),
    )


if __name__ == "__main__":
    examples.run_main(main)
