"""EndStop (SimulationX): a bouncing mass on a rigid and on an elastic stop, and a mass in the
backlash with stick-slip friction.

- rigid: a 1 kg mass falls 0.1 m (9.81 N towards stop 1, l1 = 0) onto a Rigid End Stop with
  ci = 0.8 (kind 3): rebound speeds 0.8^k, apex heights 0.64^k of the drop; m1 = 1 kg;
- elastic: the same drop onto an Elastic End Stop, k1 = 1e5 N/m, b1 = 20 N.s/m;
- friction: a 1 kg mass in a 0.2 m backlash (l1 = l2 = 0.1) with stick-slip friction (Fst = 10 N,
  Fsl = 8 N), driven by 15 N*sin(2*pi*t): it slides, sticks, breaks away and hits the stops
  (rigid, ci = 0.5).

Writes EndStop.csv (mass.s, mass.v, endstop.Fi, endstop.stop of the rigid case, and the elastic*
and friction* columns of the others) and EndStop.png, and checks the rigid case against the
analytic bounce: apex heights H*ci^(2k) (k = 1..4) within g*dt^2/8 (the most a sample on the
output grid dt can miss a parabola's apex by) and the impulses of the first four impacts
(1 + ci)*ci^k*sqrt(2*g*H) within 1e-9 N s.
"""

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu.cosim import Result, System  # noqa: E402

NAME = "EndStop"
G, H, STOP_TIME = 9.81, 0.1, 2.0
CASES = {
    "": dict(push=G, s0=-H, params=dict(mode=1, kind=3, ci=0.8, l1=0.0, l2=1.0, m1=1.0)),
    "elastic": dict(push=G, s0=-H, params=dict(mode=2, k1=1e5, b1=20.0, l1=0.0, l2=1.0, m1=1.0)),
    "friction": dict(
        amplitude=15.0,
        s0=0.0,
        params=dict(
            mode=1,
            kind=3,
            ci=0.5,
            l1=0.1,
            l2=0.1,
            m1=1.0,
            friction=True,
            kindF=2,
            Fst=10.0,
            Fsl=8.0,
        ),
    ),
}


def names(prefix):
    return (prefix + "Mass", prefix + "Endstop") if prefix else ("mass", "endstop")


def build_system(fmu, prefix, push=0.0, amplitude=0.0, s0=0.0, params=()):
    mass, stop = names(prefix)
    s = System()
    s.add("ground", fmu["Fixed"])
    s.add(stop, fmu["EndStop"], **dict(params))
    s.add(mass, fmu["Mass"], m=1.0, s_start=s0, v_start=0.0)
    s.add("drive", fmu["Sine"], amplitude=amplitude, offset=push, f=1.0)
    s.add("force", fmu["Force"])
    s.connect(f"{mass}.flange_b", f"{stop}.ctr1")
    s.connect("ground.flange", f"{stop}.ctr2")
    s.connect("drive.y", "force.f")
    s.connect("force.flange", f"{mass}.flange_a")
    return s


GRID = 1e-3  # output grid of the adaptive run (the master's default); the steps end on it


def run(out="results", step=None, fmu_dir=None):
    fmu = examples.fmus(
        fmu_dir or examples.ROOT / "fmus", ["Fixed", "EndStop", "Mass", "Sine", "Force"]
    )
    columns, wall, steps, records = {}, 0.0, [], {}
    for prefix, case in CASES.items():
        mass, stop = names(prefix)
        signals = [f"{mass}.s", f"{mass}.v", f"{stop}.Fi", f"{stop}.stop", f"{stop}.impulse"]
        if prefix == "friction":
            signals += [f"{stop}.Ff", f"{stop}.sf"]
        result, w, _ = examples.simulate(
            build_system(fmu, prefix, **case),
            out,
            NAME + prefix,
            stop_time=STOP_TIME,
            step=step,
            output_interval=step or GRID,
            outputs=signals,
        )  # every step: impulse is per step
        columns.update({n: result[n] for n in signals})
        steps.append(f"{prefix or 'rigid'}: {examples.step_text(result, step)}")
        records[prefix or "rigid"] = getattr(result, "steps", None)
        wall += w
    result = Result(
        ["time"] + list(columns), np.column_stack([result.time] + list(columns.values()))
    )
    out = Path(out)
    result.to_csv(out / f"{NAME}.csv")
    for prefix in CASES:
        if prefix:
            (out / f"{NAME}{prefix}.csv").unlink(missing_ok=True)
    plot(
        result,
        out / f"{NAME}.png",
        f"communication step {step:g} s" if step else "adaptive master: steps below",
        records,
    )
    return result, wall


def apexes(s):
    k = np.where((s[1:-1] < s[:-2]) & (s[1:-1] <= s[2:]))[0] + 1
    return -s[k]


def plot(result, path, steps, records=None):
    """3 columns (rigid, elastic, friction case) of 3 rows: position, internal force Fi, and the
    impulses of the rigid impacts (rigid) resp. the stop state (elastic) resp. the friction state."""
    import numpy as np
    from matplotlib.lines import Line2D

    def states(ax, time, values, codes):
        """An integer state over time on evenly spaced levels labelled by `codes` {value: label}."""
        codes = {**{int(v): f"{int(v)}" for v in np.unique(values[np.isfinite(values)])}, **codes}
        order = sorted(codes)
        level = np.array([order.index(int(v)) if int(v) in codes else np.nan for v in values])
        ax.step(time, level, where="post", lw=1.0, color="C3")
        ax.set_yticks(range(len(order)), [codes[c] for c in order], fontsize=8)
        ax.set_ylim(-0.5, len(order) - 0.5)

    fig, axes = plots.figure(
        3, 3, figsize=(15, 9.5), sharex=True, height_ratios=[3, 3, 2], steps=records
    )
    ci = CASES[""]["params"]["ci"]
    el, fr = CASES["elastic"]["params"], CASES["friction"]["params"]
    titles = {
        "": f"rigid stop (ci = {ci:g}): {H:g} m drop, {G:g} N",
        "elastic": f"elastic stop (k1 = {el['k1']:g} N/m, b1 = {el['b1']:g} N.s/m): same drop",
        "friction": f"backlash -{fr['l2']:g} to {fr['l1']:g} m (rigid stops, ci = {fr['ci']:g}), "
        f"{CASES['friction']['amplitude']:g} N sine,\n"
        f"stick-slip friction (Fst = {fr['Fst']:g} N, Fsl = {fr['Fsl']:g} N)",
    }
    for col, prefix in enumerate(CASES):
        mass, stop = names(prefix)
        params = CASES[prefix]["params"]
        # row 1: position, with the stop(s) and, for the rigid case, the analytic apex heights
        ax = axes[0, col]
        ax.plot(result.time, result[f"{mass}.s"], lw=1.4, label=f"{mass}.s")
        ax.axhline(
            params["l1"],
            color="grey",
            lw=1.0,
            ls="-.",
            label=f"end stop 1 (s = l1 = {params['l1']:g} m)",
        )
        if prefix == "friction":
            ax.axhline(
                -params["l2"],
                color="grey",
                lw=1.0,
                ls="--",
                label=f"end stop 2 (s = -l2 = {-params['l2']:g} m)",
            )
        if not prefix:
            for k in range(1, 4):
                ax.axhline(
                    -H * ci ** (2 * k),
                    color="black",
                    lw=0.8,
                    ls=":",
                    label="analytic apex heights -H*ci^(2k), k = 1..3" if k == 1 else None,
                )
        ax.set_ylabel(f"position {mass}.s [m]")
        ax.set_title(titles[prefix], fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(
            fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.04), ncol=2, borderaxespad=0.0
        )
        # row 2: internal force (impacts excluded)
        ax = axes[1, col]
        ax.plot(result.time, result[f"{stop}.Fi"], lw=1.2, color="C0")
        if prefix == "friction":
            for level, style in ((params["Fst"], ":"), (params["Fsl"], "--")):
                for sign in (1, -1):
                    ax.axhline(sign * level, color="grey", lw=0.8, ls=style)
            ax.legend(
                handles=[
                    Line2D([], [], color="grey", lw=0.8, ls=":", label="+-Fst (static)"),
                    Line2D([], [], color="grey", lw=0.8, ls="--", label="+-Fsl (sliding)"),
                ],
                fontsize=7,
                loc="upper center",
                bbox_to_anchor=(0.5, -0.04),
                ncol=2,
                borderaxespad=0.0,
            )
            ax.set_ylabel(f"{stop}.Fi (= Ff here) [N]")
        else:
            ax.set_ylabel(f"{stop}.Fi [N]")
        if not prefix:  # the rigid stop's permanent contact
            at_stop = result[f"{stop}.stop"] == 1
            if at_stop.any():
                ax.axvspan(
                    result.time[at_stop][0],
                    result.time[-1],
                    color="C3",
                    alpha=0.12,
                    lw=0,
                    label="stop = 1: permanent contact",
                )
                ax.legend(
                    fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.04), borderaxespad=0.0
                )
        ax.set_title("internal force Fi = Fstop + Ff, impacts excluded", fontsize=9)
        ax.grid(True, alpha=0.3)
        # row 3: what distinguishes the case
        ax = axes[2, col]
        if not prefix:
            impulse = result[f"{stop}.impulse"]
            hit = impulse != 0.0
            ax.vlines(result.time[hit], 0.0, impulse[hit], color="C0", lw=1.2)
            ax.plot(result.time[hit], impulse[hit], "o", color="C0", ms=4, label="located impacts")
            expected = [(1 + ci) * ci**k * math.sqrt(2 * G * H) for k in range(int(hit.sum()))]
            ax.plot(
                result.time[hit],
                expected,
                "x",
                color="black",
                ms=6,
                label="analytic (1+ci)*ci^k*sqrt(2gH)",
            )
            ax.set_ylabel(f"{stop}.impulse [N.s]")
            ax.set_title("impulses of the impacts", fontsize=9)
            ax.legend(fontsize=7, loc="upper right")
        elif prefix == "elastic":
            codes = {0: "0 free", 1: "1 at stop 1", 11: "11 detaching"}
            states(ax, result.time, result[f"{stop}.stop"], codes)
            ax.set_ylabel(f"{stop}.stop [-]")
            ax.set_title("stop state", fontsize=9)
        else:
            states(
                ax,
                result.time,
                result[f"{stop}.sf"],
                {-1: "-1 slides, dv < 0", 0: "0 stuck", 1: "1 slides, dv > 0"},
            )
            ax.set_ylabel(f"{stop}.sf [-]")
            ax.set_title("friction state (the stop is only touched in impacts)", fontsize=9)
        ax.set_xlabel("time [s]")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"EndStop FMU co-simulations: 1 kg mass, stop 1 at s = l1\n({steps})")
    plots.save(fig, path)


def check_rigid(result):
    """The rigid case against the analytic bounce (module docstring)."""
    ci = CASES[""]["params"]["ci"]
    dt = result.time[1] - result.time[0]
    heights = list(apexes(result["mass.s"])[:4])
    impulses = list(result["endstop.impulse"][result["endstop.impulse"] != 0.0][:4])
    checks = examples.Checks()
    for k in range(4):
        h = heights[k] if k < len(heights) else float("nan")
        checks.append(
            examples.Check(
                f"apex height {k + 1}", h, H * ci ** (2 * k + 2), G * dt * dt / 8 + 1e-12, "m"
            )
        )
    for k in range(4):
        j = impulses[k] if k < len(impulses) else float("nan")
        checks.append(
            examples.Check(
                f"impulse of impact {k + 1}",
                j,
                (1 + ci) * ci**k * math.sqrt(2 * G * H),
                1e-9,
                "N s",
            )
        )
    return checks


def main(argv=None):
    args = examples.parse_args(__doc__.splitlines()[0], None, argv)
    result, wall = run(args.out, args.step, args.fmus)
    impacts = int(np.count_nonzero(result["endstop.impulse"]))
    print(f"rigid stop: {impacts} impacts located in {STOP_TIME:g} s")
    print(
        "elastic stop: apex heights [m]: "
        + ", ".join(f"{h:.6f}" for h in apexes(result["elasticMass.s"])[:4])
    )
    return examples.summarize(
        NAME,
        result,
        args.step,
        wall,
        args.out,
        ("rigid stop vs the analytic bounce", check_rigid(result)),
    )


if __name__ == "__main__":
    examples.run_main(main)
