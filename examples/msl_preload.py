"""MSL Translational.Examples.PreLoad rebuilt from FMUs (the MSL 4.1 example model).

"Preload of a spool using ElastoGap models": a spool (150 g) is held between two spring plates
(10 g each) preloaded by a spring (c = 2e4 N/m, 65 N); four ElastoGaps (c = 1e6 N/m,
d = 250 N.s/m) are the inner and outer contacts, a damper named friction (d = 2500 N.s/m)
acts on the spool, and a sine force (150 N, 0.01 Hz) drives it. Rods are connection offsets.
StopTime 100 s. Writes PreLoad.csv (friction.v_rel, innerContactA.s_rel, innerContactB.s_rel,
outerContactA.v_rel, outerContactB.s_rel, outerContactB.v_rel, spool.s, force.f) and
PreLoad.png: spool.s over force.f, the preload characteristic of the documentation. Compares
the six comparison signals with the MSL reference result (Dymola, refdata/PreLoad) in the
csv-compare tube (tolerance 2e-3) on the experiment's 0.05 s output grid.

The model is stiff (c = 1e6 N/m against 10 g plates, d = 250 N.s/m: a fixed explicit coupling is
stable only for steps below 2*m/d = 8e-5 s and needs 2e-5 s). By default the adaptive master
chooses the steps (stiff contacts coupled implicitly, contact changes located) at its default
tolerance (rtol 1e-4, atol 1e-6); --step H runs a fixed step instead. --stop shortens the run
(the MSL comparison then covers the part run); --check also compares with the project's
monolithic scipy model (tube, tolerance 2e-3).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu.cosim import Result, System, compare  # noqa: E402

NAME = "PreLoad"
SIGNALS = [
    "friction.v_rel",
    "innerContactA.s_rel",
    "innerContactB.s_rel",
    "outerContactA.v_rel",
    "outerContactB.s_rel",
    "outerContactB.v_rel",
    "spool.s",
    "force.f",
]
FIXED_STEP = 2e-5  # the fixed step that passes (--step); 20 minutes for the 100 s
OUTPUT_INTERVAL = 0.05  # the experiment's output grid (the MSL reference result's)
DEFAULT_RTOL = 1e-4  # the adaptive master's default tolerance (atol = rtol*1e-2)


def build_system(fmu):
    s = System()
    s.add("fixedLe", fmu["Fixed"], s0=-0.0955)
    for name in ("innerContactA", "innerContactB"):
        s.add(name, fmu["ElastoGap"], c=1000e3, d=250.0, s_rel0=0.001)
    for name in ("outerContactA", "outerContactB"):
        s.add(name, fmu["ElastoGap"], c=1000e3, d=250.0, s_rel0=0.0015)
    s.add("spool", fmu["Mass"], m=0.150, L=0.19, s_start=0.01475, v_start=0.0)
    s.add("springPlateA", fmu["Mass"], m=10e-3, L=0.002, s_start=-0.093, v_start=0.0)
    s.add("springPlateB", fmu["Mass"], m=10e-3, L=0.002, s_start=-0.06925, v_start=0.0)
    s.add("spring", fmu["Spring"], c=20e3, s_rel0=0.025)
    s.add("friction", fmu["Damper"], d=2500.0)
    s.add("force", fmu["Force"])
    s.add("sineForce", fmu["Sine"], amplitude=150.0, f=0.01)
    s.connect("sineForce.y", "force.f")
    s.connect("force.flange", "spool.flange_a")
    s.connect("fixedLe.flange", "outerContactA.flange_a")
    s.connect("outerContactA.flange_b", "springPlateA.flange_a")
    s.connect("springPlateA.flange_b", "spring.flange_a")
    s.connect("spring.flange_b", "springPlateB.flange_a")
    s.connect("springPlateB.flange_b", "outerContactB.flange_a")
    s.connect("fixedLe.flange", "outerContactB.flange_b", rod=0.0305)  # housing, L = 0.0305
    s.connect("springPlateA.flange_b", "innerContactA.flange_b", rod=0.007)  # rod1
    s.connect("spool.flange_a", "innerContactA.flange_a", rod=-0.00575)  # rod3
    s.connect("spool.flange_a", "innerContactB.flange_b", rod=0.00575)  # rod4
    s.connect("springPlateB.flange_a", "innerContactB.flange_a", rod=-0.007)  # rod2
    s.connect("fixedLe.flange", "friction.flange_a")
    s.connect("spool.flange_a", "friction.flange_b", rod=-0.00575)  # via rod3
    return s


def run(out="results", step=None, fmu_dir=None, stop=100.0, check=False, rtol=DEFAULT_RTOL):
    """Run the example; returns (result, tube report against the MSL result, report against the
    scipy model or None, wall time in s)."""
    fmu = examples.fmus(
        fmu_dir or examples.ROOT / "fmus",
        ["Fixed", "ElastoGap", "Mass", "Spring", "Damper", "Force", "Sine"],
    )
    system = build_system(fmu)
    result, wall, out = examples.simulate(
        system,
        out,
        NAME,
        stop_time=stop,
        step=step,
        output_interval=max(step or 0.0, OUTPUT_INTERVAL),
        outputs=SIGNALS,
        **examples.tolerance(step, rtol),
    )
    msl = examples.reference(NAME)
    if stop < msl.time[-1]:
        keep = msl.time <= stop
        msl = Result(msl.names, np.column_stack([msl[n][keep] for n in msl.names]))
    report = compare(result, msl, SIGNALS[:6])
    scipy_report = None
    if check:
        from contactfmu.monolithic import preload

        # the reference resolves the start transient (plate B flies free for 0.8 ms and hits its
        # outer contact at 4 m/s) finely, as the Dymola result does with its event rows
        t_ref = np.union1d(result.time, np.linspace(0.0, min(0.01, stop), 1001))
        ref = preload(t_ref, stop_time=stop)
        reference = Result(["time"] + SIGNALS, np.column_stack([t_ref] + [ref[n] for n in SIGNALS]))
        scipy_report = compare(result, reference, SIGNALS[:-2] + ["spool.s"])
    plot(result, out / f"{NAME}.png", examples.step_text(result, step))
    return result, report, scipy_report, wall


def plot(result, path, steps):
    """spool.s over force.f (the preload characteristic) and the contacts' s_rel over time, with
    the gaps s_rel0 below which an ElastoGap is in contact."""
    fig, (ax1, ax2) = plots.figure(1, 2, figsize=(12, 5.2), steps=getattr(result, "steps", None))
    ax1.plot(result["force.f"], result["spool.s"] * 1e3, lw=1.4)
    ax1.set_xlabel("drive force force.f [N]")
    ax1.set_ylabel("spool position spool.s [mm]")
    ax1.set_title("preload characteristic: spool.s over force.f", fontsize=10)
    ax1.grid(True, alpha=0.3)
    for name in ("innerContactA.s_rel", "innerContactB.s_rel", "outerContactB.s_rel"):
        ax2.plot(result.time, result[name] * 1e3, lw=1.4, label=name)
    ax2.axhline(1.0, color="black", ls=":", lw=1.0, label="inner contacts: s_rel0 = 1 mm")
    ax2.axhline(1.5, color="grey", ls="-.", lw=1.0, label="outer contacts: s_rel0 = 1.5 mm")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("relative position s_rel [mm]")
    ax2.set_title("ElastoGap contacts (in contact while s_rel < s_rel0)", fontsize=10)
    ax2.grid(True, alpha=0.3)
    ax2.legend(
        fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, borderaxespad=0.0
    )
    fig.suptitle(f"MSL PreLoad from FMUs, 0 to {result.time[-1]:g} s ({steps})")
    plots.save(fig, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument(
        "--step",
        type=float,
        default=None,
        help=f"fixed communication step in s (default: none, the adaptive master; {FIXED_STEP:g} passes)",
    )
    parser.add_argument(
        "--rtol",
        type=float,
        default=DEFAULT_RTOL,
        help=f"tolerance of the adaptive master (default {DEFAULT_RTOL:g}; atol = rtol*1e-2)",
    )
    parser.add_argument("--fmus", default=str(examples.ROOT / "fmus"))
    parser.add_argument("--stop", type=float, default=100.0, help="stop time in s (default 100)")
    parser.add_argument(
        "--check", action="store_true", help="compare with the monolithic scipy reference"
    )
    args = parser.parse_args(argv)
    if (args.step is not None and not args.step > 0) or not args.stop > 0 or not args.rtol > 0:
        parser.error("--step, --stop and --rtol must be > 0")
    result, report, scipy_report, wall = run(
        args.out, args.step, args.fmus, args.stop, args.check, args.rtol
    )
    sections = [("tube vs Dymola reference (2e-3)", report)]
    if args.check:
        sections.append(
            ("tube vs the project's monolithic reference (scipy, --check)", scipy_report)
        )
    return examples.summarize(NAME, result, args.step, wall, args.out, *sections)


if __name__ == "__main__":
    examples.run_main(main)
