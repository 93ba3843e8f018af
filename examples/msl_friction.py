"""MSL Translational.Examples.Friction, stop1 and stop2 parts, from FMUs (the MSL 4.1 example model).

stop1: MassWithStopAndFriction (m = 1 kg, L = 1 m, F_prop = 1, F_Coulomb = 5, F_Stribeck = 10,
fexp = 2) driven by a sine force (25 N, 0.25 Hz). stop2: MassWithStopAndFriction (L = 1 m,
smax = 0.9 m, smin = -0.9 m, F_Coulomb = 3, F_Stribeck = 5) tied by a spring (c = 500 N/m,
s_rel0 = 1 m) to a fixed point at -1.75 m, starting at s = 0 with v = -5 m/s: it hits its left
stop, breaks away, oscillates and finally sticks. StopTime 5 s. Writes Friction.csv (stop1.s,
stop1.v, stop1.f, stop1.mode, stop2.s, stop2.v, stop2.mode, ...) and Friction.png (stop1.f over
stop1.v: the Stribeck curve; stop2.s over time), and compares the located event times of stop2
(stop impact, each stick and slip, final stick) with the event instants of the Dymola reference
result (contactfmu/refdata/Friction/events.csv): the stop impact within 2e-6 s, the others
within 1e-4 s (1 % of the reference tube's dt = 0.01 s).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu.cosim import System  # noqa: E402

NAME = "Friction"
# the adaptive master's tolerance (atol = rtol*1e-2): 1e-5, for the stop impact within 2e-6 s of
# Dymola's (measured 1.42e-6 s, the later reversals within 3.4e-5 s of their 1e-4 s; at 1e-6
# 1.9e-8 s and 3.7e-6 s, at 3e-5 the last event 1.0e-4 s off)
DEFAULT_RTOL = 1e-5
SIGNALS = [
    "stop1.s",
    "stop1.v",
    "stop1.f",
    "stop1.mode",
    "stop2.s",
    "stop2.v",
    "stop2.mode",
    "stop2.lastEventTime",
    "stop2.stopped",
]
IMPACT_TOL, EVENT_TOL = 2e-6, 1e-4  # s: the stop impact; every later stick/slip event


def build_system(fmu):
    s = System()
    s.add("sineForce", fmu["Sine"], amplitude=25.0, f=0.25)
    s.add("force", fmu["Force"])
    s.add(
        "stop1",
        fmu["MassWithStopAndFriction"],
        L=1.0,
        smax=25.0,
        smin=-25.0,
        m=1.0,
        F_prop=1.0,
        F_Coulomb=5.0,
        F_Stribeck=10.0,
        fexp=2.0,
        s_start=0.0,
        v_start=0.0,
    )
    s.connect("sineForce.y", "force.f")
    s.connect("force.flange", "stop1.flange_a")
    s.add("fixed2", fmu["Fixed"], s0=-1.75)
    s.add("spring", fmu["Spring"], c=500.0, s_rel0=1.0)
    s.add(
        "stop2",
        fmu["MassWithStopAndFriction"],
        L=1.0,
        smax=0.9,
        smin=-0.9,
        F_Coulomb=3.0,
        F_Stribeck=5.0,
        m=1.0,
        F_prop=1.0,
        fexp=2.0,
        s_start=0.0,
        v_start=-5.0,
    )
    s.connect("fixed2.flange", "spring.flange_a")
    s.connect("spring.flange_b", "stop2.flange_a")
    return s


def event_times(result):
    """The distinct located event times reported by stop2 (lastEventTime)."""
    times = result["stop2.lastEventTime"]
    return sorted({float(x) for x in times if x >= 0.0})


def run(out="results", step=None, fmu_dir=None, rtol=None):
    fmu = examples.fmus(
        fmu_dir or examples.ROOT / "fmus",
        ["Sine", "Force", "MassWithStopAndFriction", "Fixed", "Spring"],
    )
    system = build_system(fmu)
    result, wall, out = examples.simulate(
        system,
        out,
        NAME,
        stop_time=5.0,
        step=step,
        output_interval=max(step or 0.0, 5e-4),
        outputs=SIGNALS,
        **examples.tolerance(step, rtol or DEFAULT_RTOL),
    )
    plot(result, out / f"{NAME}.png", examples.step_text(result, step))
    return result, wall


def dymola_events():
    """[(event, time)] of stop2 in the Dymola reference result (refdata/Friction/events.csv)."""
    ref = examples.read_table(examples.REFDATA / NAME / "events.csv")
    return [(row["event"], float(row["time"])) for row in ref]


def check_events(result):
    """Checks of stop2's located event times against Dymola's, in order; a missing or extra event
    is a failed check."""
    located = event_times(result)
    checks = examples.Checks()
    for k, (event, t_ref) in enumerate(dymola_events()):
        tol = IMPACT_TOL if k == 0 else EVENT_TOL
        t = located[k] if k < len(located) else float("nan")
        checks.append(examples.Check(f"stop2 {event}", t, t_ref, tol, "s"))
    if len(located) != len(checks):
        checks.append(examples.Check("number of stop2 events", len(located), len(checks), 0))
    return checks


def plot(result, path, steps):
    """stop1's friction force over its velocity (the Stribeck curve) and stop2's position over time
    with its located events and the Dymola reference's event instants (if the table is there)."""
    import numpy as np
    from matplotlib.lines import Line2D

    fig, (ax1, ax2) = plots.figure(
        1, 2, figsize=(12, 5.4), width_ratios=[1, 1.25], steps=getattr(result, "steps", None)
    )
    ax1.plot(result["stop1.v"], result["stop1.f"], ".", ms=2)
    ax1.set_xlabel("velocity stop1.v [m/s]")
    ax1.set_ylabel("friction force stop1.f [N]")
    ax1.set_title(
        "stop1: friction force over velocity (Stribeck curve;\nthe vertical line at v = 0 is sticking)",
        fontsize=10,
    )
    ax1.grid(True, alpha=0.3)
    ax2.plot(result.time, result["stop2.s"], lw=1.4, color="C0")
    handles = [Line2D([], [], lw=1.4, color="C0", label="stop2.s, FMU co-simulation")]
    located = event_times(result)
    if located:
        ax2.plot(
            located,
            np.interp(located, result.time, result["stop2.s"]),
            "o",
            mfc="none",
            color="C3",
            ms=6,
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="o",
                mfc="none",
                color="C3",
                ms=6,
                label="events located by the FMU (stop2.lastEventTime)",
            )
        )
    try:
        reference = [t for _, t in dymola_events()]
    except examples.ReferenceMissing:
        reference = []
    for t in reference:
        ax2.axvline(t, color="black", ls="--", lw=0.7)
    if reference:
        handles.append(
            Line2D([], [], color="black", ls="--", lw=0.7, label="Dymola reference event instants")
        )
    ax2.axhline(-0.4, color="grey", ls=":", lw=1.0)
    handles.append(
        Line2D(
            [],
            [],
            color="grey",
            ls=":",
            lw=1.0,
            label="centre at the left stop (smin + L/2 = -0.4 m)",
        )
    )
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("position stop2.s [m]")
    ax2.set_title("stop2: hits its left stop, oscillates, sticks", fontsize=10)
    ax2.grid(True, alpha=0.3)
    ax2.legend(
        handles=handles,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=2,
        borderaxespad=0.0,
    )
    fig.suptitle(f"MSL Friction example (stop1, stop2) from FMUs ({steps})")
    plots.save(fig, path)


def main(argv=None):
    args = examples.parse_args(__doc__.splitlines()[0], None, argv, DEFAULT_RTOL)
    result, wall = run(args.out, args.step, args.fmus, args.rtol)
    times = event_times(result)
    print("stop2 events located inside the steps [s]: " + ", ".join(f"{t:.10g}" for t in times))
    print(
        f"stop2 final position {result['stop2.s'][-1]:.6g} m (Dymola: sticks for good near -0.2475 m)"
    )
    return examples.summarize(
        NAME,
        result,
        args.step,
        wall,
        args.out,
        ("event times vs Dymola reference", check_events(result)),
    )


if __name__ == "__main__":
    examples.run_main(main)
