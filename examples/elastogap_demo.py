"""The three force curves of the MSL ElastoGap documentation, for one impact.

A 1 kg mass hits a wall at 1 m/s through a spring/damper contact (c = 1e4 N/m,
d = 150 N.s/m, strongly damped so that the effects are visible):

1. the unmodified linear spring/damper law f = -c*|s_rel| + d*v_rel: a pulling/sticking force
   at the end of the contact;
2. that law with the force set to zero when it would pull: discontinuous when contact starts;
3. ElastoGap (|f_d| <= |f_c|): neither. Curve 3 is computed twice: monolithically and by
   co-simulation of the ElastoGap, Mass and Fixed FMUs (markers; by default the adaptive master
   with every point of the 0.1 ms grid ending a step, Adaptive(dense=False), as the pointwise
   comparison asks: its dense output would interpolate across the kink of the bounded damper
   force at the peak, 0.55 N of 128 N; at rtol 1e-7: the steps' local errors add up over the
   contact, so 1e-5 of the peak takes that tolerance, 9.3e-4 N with 783 fmi2DoStep calls per FMU,
   where step doubling needed 1261 calls for 8.7e-4 N at rtol 1e-4; --step H: a fixed step,
   recorded every step).

Curves 1 to 3 are monolithic (scipy, tight tolerances) solutions of the mass with each law.
Writes ElastoGapDemo.csv (time, the three forces of the monolithic runs and of the FMU run)
and ElastoGapDemo.png. Forces are the MSL f (= flange_b.f; negative pushes). The FMU curve is
compared with the monolithic curve 3 (tube, tolerance 2e-3).
"""

import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu import monolithic as ref  # noqa: E402  (laws written out independently of the FMUs' code)
from contactfmu.cosim import Result, System, compare  # noqa: E402
from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm  # noqa: E402

NAME = "ElastoGapDemo"
M, C, D, V0, GAP = 1.0, 1e4, 150.0, 1.0, 2e-3
LAWS = {
    "elastoGap1.f": lambda s, v: ref.elastogap_unmodified_force(s, v, C, D),
    "elastoGap2.f": lambda s, v: ref.elastogap_clipped_force(s, v, C, D),
    "elastoGap3.f": lambda s, v: ref.elastogap_force(s, v, C, D),
}
LABELS = {
    "elastoGap1.f": "1: unmodified linear spring/damper (pulls at the end)",
    "elastoGap2.f": "2: force set to zero when pulling (jumps at contact start)",
    "elastoGap3.f": "3: ElastoGap (continuous, never pulls)",
}


def monolithic(law, t):
    sol = solve_ivp(
        lambda _, y: [y[1], -law(y[0], y[1]) / M],
        (t[0], t[-1]),
        [GAP, -V0],
        t_eval=t,
        method="DOP853",
        rtol=1e-10,
        atol=1e-13,
        max_step=1e-5,
    )
    return np.array([law(s, v) for s, v in zip(sol.y[0], sol.y[1])])


GRID = 1e-4  # output grid of the adaptive run (default): 401 points over the 40 ms


def run(out="results", step=None, fmu_dir=None):
    grid = step or GRID
    t = np.arange(0.0, 0.04 + grid / 2, grid)
    columns = {name: monolithic(law, t) for name, law in LAWS.items()}
    fmu = examples.fmus(fmu_dir or examples.ROOT / "fmus", ["Fixed", "ElastoGap", "Mass"])
    s = System()
    s.add("wall", fmu["Fixed"])
    s.add("elastoGap3", fmu["ElastoGap"], c=C, d=D)
    s.add("mass", fmu["Mass"], m=M, s_start=GAP, v_start=-V0)
    s.connect("wall.flange", "elastoGap3.flange_a")
    s.connect("elastoGap3.flange_b", "mass.flange_a")
    t0 = time.perf_counter()
    # the curve compared point by point: every grid point ends a step, none is interpolated
    scheme = None if step else AdaptiveAlgorithm(Adaptive(rtol=1e-7, atol=1e-9, dense=False))
    cosim = s.simulate(t[-1], step, output_interval=grid, outputs=["elastoGap3.f"], scheme=scheme)
    wall = time.perf_counter() - t0
    columns["elastoGap3.f (FMU co-simulation)"] = np.interp(t, cosim.time, cosim["elastoGap3.f"])
    result = Result(["time"] + list(columns), np.column_stack([t] + list(columns.values())))
    result.steps = getattr(cosim, "steps", None)  # the FMU run's communication steps
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / f"{NAME}.csv")
    plot(result, out / f"{NAME}.png", examples.step_text(cosim, step))
    return result, wall


def plot(result, path, steps):
    """The three monolithic force curves and the FMU run (markers) over time; legend below."""
    fig, ax = plots.figure(figsize=(10, 5.6), steps=getattr(result, "steps", None))
    t_ms = result.time * 1e3
    styles = {
        "elastoGap1.f": dict(lw=3.2, alpha=0.55),  # wide: curve 2 runs on it in contact
        "elastoGap2.f": dict(lw=1.4, ls="--"),
        "elastoGap3.f": dict(lw=1.8),
    }
    for name, label in LABELS.items():
        ax.plot(t_ms, result[name], label=label, **styles[name])
    every = max(1, len(t_ms) // 80)
    ax.plot(
        t_ms[::every],
        result["elastoGap3.f (FMU co-simulation)"][::every],
        "k.",
        ms=4,
        zorder=3,
        label=f"3: ElastoGap FMU co-simulation, every {every}th output point ({steps})"
        if "adaptive" not in steps
        else f"3: ElastoGap FMU co-simulation, every {every}th output point",
    )
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("contact force f = flange_b.f [N]  (< 0: pushes)")
    ax.set_title(
        f"ElastoGap force laws during one impact: m = {M:g} kg hits a wall at {V0:g} m/s, "
        f"c = {C:g} N/m, d = {D:g} N.s/m\n(curves 1 and 2 coincide until 1 would pull)",
        fontsize=10,
    )
    ax.grid(True, alpha=0.3)
    fig.legend(
        handles=ax.get_legend_handles_labels()[0], loc="outside lower center", ncol=2, fontsize=8
    )
    plots.save(fig, path)


def main(argv=None):
    args = examples.parse_args(__doc__.splitlines()[0], None, argv)
    result, wall = run(args.out, args.step, args.fmus)
    f1, f2, f3 = (result[n] for n in LAWS)
    print(
        f"{NAME}: max pulling force of law 1: {f1.max():.2f} N; law 2 jumps to {f2[np.argmax(f2 < 0)]:.2f} N "
        f"at contact start; ElastoGap: max {f3.max():.2g} N, first contact value {f3[np.argmax(f3 < 0)]:.3g} N; "
        f"FMU run {wall:.2f} s -> {args.out}/{NAME}.csv, .png"
    )
    fmu = result.select(
        ["elastoGap3.f (FMU co-simulation)"], {"elastoGap3.f (FMU co-simulation)": "elastoGap3.f"}
    )
    report = compare(fmu, result.select(["elastoGap3.f"]))
    peak = np.max(np.abs(f3))
    worst = examples.Checks(
        [
            examples.Check(
                "largest |FMU - monolithic| of curve 3 (1e-5 of the peak; measured 9.3e-4 N of 128 N by default, "
                "1.3e-4 N at --step 1e-5)",
                np.max(np.abs(fmu["elastoGap3.f"] - f3)),
                0.0,
                1e-5 * peak,
                "N",
            )
        ]
    )
    return examples.summarize(
        NAME,
        result,
        args.step,
        wall,
        args.out,
        ("curve 3 from the FMUs: tube vs the monolithic ElastoGap solution", report),
        ("curve 3 from the FMUs: pointwise", worst),
    )


if __name__ == "__main__":
    examples.run_main(main)
