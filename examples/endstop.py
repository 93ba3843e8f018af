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

from contactfmu import examples  # noqa: E402
from contactfmu.cosim import Result, System  # noqa: E402

NAME = "EndStop"
G, H, STOP_TIME = 9.81, 0.1, 2.0
CASES = {
    "": dict(push=G, s0=-H, params=dict(mode=1, kind=3, ci=0.8, l1=0.0, l2=1.0, m1=1.0)),
    "elastic": dict(push=G, s0=-H, params=dict(mode=2, k1=1e5, b1=20.0, l1=0.0, l2=1.0, m1=1.0)),
    "friction": dict(amplitude=15.0, s0=0.0, params=dict(mode=1, kind=3, ci=0.5, l1=0.1, l2=0.1, m1=1.0,
                                                          friction=True, kindF=2, Fst=10.0, Fsl=8.0)),
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


def run(out="results", step=1e-3, fmu_dir=None):
    fmu = examples.fmus(fmu_dir or examples.ROOT / "fmus", ["Fixed", "EndStop", "Mass", "Sine", "Force"])
    columns, wall = {}, 0.0
    for prefix, case in CASES.items():
        mass, stop = names(prefix)
        signals = [f"{mass}.s", f"{mass}.v", f"{stop}.Fi", f"{stop}.stop", f"{stop}.impulse"]
        if prefix == "friction":
            signals += [f"{stop}.Ff", f"{stop}.sf"]
        result, w, _ = examples.simulate(build_system(fmu, prefix, **case), out, NAME + prefix, stop_time=STOP_TIME,
                                         step=step, output_interval=max(step, 1e-3), outputs=signals)
        columns.update({n: result[n] for n in signals})
        wall += w
    result = Result(["time"] + list(columns), np.column_stack([result.time] + list(columns.values())))
    out = Path(out)
    result.to_csv(out / f"{NAME}.csv")
    for prefix in CASES:
        if prefix:
            (out / f"{NAME}{prefix}.csv").unlink(missing_ok=True)
    plot(result, out / f"{NAME}.png", step)
    return result, wall


def apexes(s):
    k = np.where((s[1:-1] < s[:-2]) & (s[1:-1] <= s[2:]))[0] + 1
    return -s[k]


def plot(result, path, step):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(14, 6.5), sharex=True)
    titles = {"": "rigid stop, ci = 0.8", "elastic": "elastic stop, k1 = 1e5, b1 = 20",
              "friction": "backlash +-0.1 m, stick-slip friction, 15 N sine"}
    for col, prefix in enumerate(CASES):
        mass, stop = names(prefix)
        ax = axes[0, col]
        ax.plot(result.time, result[f"{mass}.s"], label=f"{mass}.s [m]")
        if not prefix:                                   # analytic apex heights H*ci^(2k)
            for k in range(1, 4):
                ax.axhline(-H * 0.64 ** k, color="grey", lw=0.6, ls=":")
        ax.set_title(titles[prefix])
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        ax = axes[1, col]
        ax.plot(result.time, result[f"{stop}.Fi"], label=f"{stop}.Fi [N] (impacts excluded)")
        ax2 = ax.twinx()
        ax2.step(result.time, result[f"{stop}.stop"], where="post", color="C3", lw=0.8, label=f"{stop}.stop")
        if prefix == "friction":
            ax2.step(result.time, result[f"{stop}.sf"], where="post", color="C2", lw=0.8, label=f"{stop}.sf")
        ax2.legend(fontsize=8, loc="upper right")
        ax.legend(fontsize=8, loc="upper left")
        ax.set_xlabel("time [s]")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"EndStop FMU co-simulations (communication step {step:g} s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check_rigid(result):
    """The rigid case against the analytic bounce (module docstring)."""
    ci = CASES[""]["params"]["ci"]
    dt = result.time[1] - result.time[0]
    heights = list(apexes(result["mass.s"])[:4])
    impulses = list(result["endstop.impulse"][result["endstop.impulse"] != 0.0][:4])
    checks = examples.Checks()
    for k in range(4):
        h = heights[k] if k < len(heights) else float("nan")
        checks.append(examples.Check(f"apex height {k + 1}", h, H * ci ** (2 * k + 2), G * dt * dt / 8 + 1e-12, "m"))
    for k in range(4):
        j = impulses[k] if k < len(impulses) else float("nan")
        checks.append(examples.Check(f"impulse of impact {k + 1}", j, (1 + ci) * ci ** k * math.sqrt(2 * G * H), 1e-9,
                                     "N s"))
    return checks


def main(argv=None):
    args = examples.parse_args(__doc__.splitlines()[0], 1e-3, argv)
    result, wall = run(args.out, args.step, args.fmus)
    impacts = int(np.count_nonzero(result["endstop.impulse"]))
    print(f"rigid stop: {impacts} impacts located in {STOP_TIME:g} s")
    print("elastic stop: apex heights [m]: " + ", ".join(f"{h:.6f}" for h in apexes(result['elasticMass.s'])[:4]))
    return examples.summarize(NAME, result, args.step, wall, args.out,
                              ("rigid stop vs the analytic bounce", check_rigid(result)))


if __name__ == "__main__":
    examples.run_main(main)
