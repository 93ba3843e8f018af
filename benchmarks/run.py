"""Stiff contacts in co-simulation: accuracy at large communication steps, and speed.

    python benchmarks/run.py [--quick] [--out benchmarks/results.json]

Prints a table per benchmark and writes the numbers to benchmarks/results.json; exits 1 if a
goal does not hold. Every coupling is run in the same process, one after the other:

  plain     the project's master with values only, held over the step (zero-order hold, the
            plain fixed-step coupling of most masters; libcosim's Jacobi differs only in order)
  foh       the project's default: Gauss-Seidel order and first derivatives passed, so forces
            vary linearly over the step (System(interpolate_inputs=True))
  implicit  scheme="implicit": backward Euler on the interface, from the compliant elements'
            interface stiffness and damping outputs (cosim.implicit.ImplicitCoupling)
  inertia   the contact element integrates the contact itself, given the attached inertia
            (ElastoGap/TranslationalHardstop parameters m_a, m_b; coupler.couple), in the
            plain master
  inertia-jacobi  the same element in libcosim's Jacobi scheme (scheme="jacobi": every FMU steps,
            then outputs are copied; the element holds inputs one step old when it is read)

Benchmarks:
  1. split impact: 1 kg at 1 m/s into an ElastoGap (c = 1e5 N/m, d = 20 N.s/m) on a fixed
     support, split across three FMUs; restitution against the monolithic reference
     (0.909008, contact time 9.94 ms) for steps 1e-5 .. 1e-3 s and half the contact time;
  2. MSL examples: the largest communication step of a ladder (1e-2 .. 1e-5 s, tried from the
     largest down) at which the result passes the 2e-3 tube, and the wall time there: ElastoGap
     and GenerationOfFMUs against Dymola, PreLoad and Friction against the project's monolithic
     scipy references (contactfmu.monolithic; rtol 1e-9 and 1e-10, events located);
  3. cost per communication step of each FMU (inputs of its cross-check experiment set, doStep,
     flange outputs read, through the FMI C API), against a pythonfmu slave doing nothing with
     the same number of inputs and outputs (benchmarks/trivial_slave.py); the minimum over
     interleaved rounds;
  4. TranslationalHardstop at its default c = d = 1e10: a 1 kg mass at 1 m/s, 1 ms steps.

Goals (ratios against plain coupling measured in the same run): PreLoad passes its tube in
under 20 s of wall time; the split impact's restitution within 1% at a step of half the contact
time; every FMU's per-step cost within 2x of the trivial slave's.

--quick (run by the tests, about a minute): split impact at 1e-4, 1e-3 s and Tc/2; of the
examples PreLoad and ElastoGap only, on short ladders (PreLoad 1e-2..2e-3 s; its plain and foh
coupling at 5e-5, 2e-5 s, foh not run); fewer cost rounds; plain coupling of PreLoad on its
first 2 s only (their wall time for 100 s is then extrapolated, and marked so; the implicit
coupling runs the whole 100 s), everything else as in the full run.
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
sys.path.insert(0, str(ROOT / "examples"))

from contactfmu import (  # noqa: E402
    crosscheck,  # noqa: E402
    examples,
    monolithic,
)
from contactfmu.build import ensure_fmus  # noqa: E402
from contactfmu.cosim import CosimError, Result, System, compare  # noqa: E402
from contactfmu.cosim.instances import extracted  # noqa: E402

LADDER = [1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5]
COUPLINGS = {
    "plain": dict(interpolate=False, scheme="gauss-seidel"),
    "foh": dict(interpolate=True, scheme="gauss-seidel"),
    "implicit": dict(interpolate=False, scheme="implicit"),
    # the element given the attached inertia, in the project's Gauss-Seidel master and in
    # libcosim's Jacobi scheme (step, read, set: the element holds one step old inputs)
    "inertia": dict(interpolate=False, scheme="gauss-seidel"),
    "inertia-jacobi": dict(interpolate=False, scheme="jacobi"),
}
INERTIA = ("inertia", "inertia-jacobi")
SPLIT = ("plain", "foh", "implicit", "inertia", "inertia-jacobi")
HARDSTOP = (
    "plain",
    "implicit",
    "inertia",
    "inertia-jacobi",
    "adaptive",
)  # adaptive: the plain law, no step
EXAMPLE_COUPLINGS = (
    "plain",
    "foh",
    "implicit",
)  # the MSL examples (no attached-inertia parameters there)
GOAL_WALL, GOAL_RESTITUTION, GOAL_COST = 10.0, 0.01, 2.0  # PreLoad: the project's goals


def configure(system, coupling):
    system.interpolate_inputs = COUPLINGS[coupling]["interpolate"]
    return COUPLINGS[coupling]["scheme"]


# ---- 1. split impact --------------------------------------------------------------------------


def split_impact(fmu, quick):
    ref = monolithic.elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)
    e_ref, t_c = ref["restitution"], ref["contact_time"]
    steps = ([1e-4, 1e-3] if quick else [1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3]) + [0.5 * t_c]
    rows = []
    for h in steps:
        row = {"step": h, "h_over_contact_time": h / t_c}
        for coupling in SPLIT:
            s = System()
            s.add("wall", fmu["Fixed"])
            s.add(
                "gap",
                fmu["ElastoGap"],
                c=1e5,
                d=20.0,
                **({"m_b": 1.0} if coupling in INERTIA else {}),
            )
            s.add(
                "mass", fmu["Mass"], m=1.0, s_start=1.234567e-3, v_start=-1.0
            )  # contact starts inside a step
            s.connect("wall.flange", "gap.flange_a")
            s.connect("gap.flange_b", "mass.flange_a")
            scheme = configure(s, coupling)
            t0 = time.perf_counter()
            r = s.simulate(0.04, h, output_interval=0.04, outputs=["mass.v"], scheme=scheme)
            e = r["mass.v"][-1]
            row[coupling] = {
                "restitution": e,
                "error": e / e_ref - 1.0,
                "wall": time.perf_counter() - t0,
            }
        rows.append(row)
    return {
        "reference": e_ref,
        "contact_time": t_c,
        "rows": rows,
        "adaptive": [
            adaptive_impact(fmu, e_ref, rtol, rows)
            for rtol in ((1e-4,) if quick else (1e-3, 1e-4, 1e-5))
        ],
    }


def fmu_steps(records):
    """fmi2DoStep calls per FMU of an adaptive run, as the master counted them for every attempt."""
    return sum(r.calls for r in records)


def adaptive_impact(fmu, e_ref, rtol, rows):
    """The split impact with the plain law in the adaptive master (no step given), against the largest
    fixed step (first-order hold) whose error is at most the adaptive one."""
    s = System()
    s.add("wall", fmu["Fixed"])
    s.add("gap", fmu["ElastoGap"], c=1e5, d=20.0)
    s.add("mass", fmu["Mass"], m=1.0, s_start=1.234567e-3, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    t0 = time.perf_counter()
    r = s.simulate(0.04, outputs=["mass.v"], rtol=rtol, atol=rtol * 1e-2)
    e = r["mass.v"][-1]
    out = {
        "rtol": rtol,
        "restitution": e,
        "error": e / e_ref - 1.0,
        "wall": time.perf_counter() - t0,
        "accepted": sum(x.accepted for x in r.steps),
        "rejected": sum(not x.accepted for x in r.steps),
        "fmu_steps": fmu_steps(r.steps),
    }
    good = [row for row in rows if abs(row["foh"]["error"]) <= abs(out["error"])]
    best = max(good, key=lambda row: row["step"]) if good else None
    out["fixed_step"] = best["step"] if best else None
    out["fixed_fmu_steps"] = int(round(0.04 / best["step"])) if best else None
    return out


def print_split(res):
    print(
        f"\n1. Split impact (ElastoGap c = 1e5, d = 20; 1 kg at 1 m/s): restitution error vs monolithic "
        f"{res['reference']:.6f} (contact time {res['contact_time'] * 1e3:.2f} ms)"
    )
    print(f"{'step [s]':>10} {'h/Tc':>6} | " + " ".join(f"{c:>14}" for c in SPLIT))
    for row in res["rows"]:
        print(
            f"{row['step']:10.3g} {row['h_over_contact_time']:6.3f} | "
            + " ".join(f"{100 * row[c]['error']:+13.3g}%" for c in SPLIT)
        )
    print(
        "   adaptive master, plain law (no step given): error, doStep calls per FMU (accepted + rejected "
        "attempts) vs the largest fixed step (foh) as accurate"
    )
    for a in res["adaptive"]:
        fixed = (
            f"{a['fixed_step']:g} s, {a['fixed_fmu_steps']} steps"
            if a["fixed_step"]
            else "no fixed step of the table is as accurate"
        )
        print(
            f"   rtol {a['rtol']:g}: {100 * a['error']:+.3g}%, {a['fmu_steps']} doStep calls "
            f"({a['accepted']} accepted, "
            f"{a['rejected']} rejected), wall {a['wall']:.2f} s; fixed: {fixed}"
        )


# ---- 2. MSL examples --------------------------------------------------------------------------


def _dymola(name, signals, stop=None):
    ref = examples.reference(name)
    if stop is not None and stop < ref.time[-1]:  # a shortened run: the reference up to its end
        keep = ref.time <= stop
        ref = Result(ref.names, np.column_stack([ref[n][keep] for n in ref.names]))

    def check(result):
        return compare(result, ref, signals)

    return check


def _preload_check(signals, stop):
    def check(result):
        t = np.union1d(result.time, np.linspace(0.0, min(0.01, stop), 1001))
        ref = monolithic.preload(t, stop_time=stop)
        reference = Result(["time"] + signals, np.column_stack([t] + [ref[n] for n in signals]))
        return compare(result, reference, signals)

    return check


def _friction_check(signals):
    def check(result):
        ref = monolithic.friction(result.time)
        reference = Result(
            ["time"] + signals, np.column_stack([result.time] + [ref[n] for n in signals])
        )
        return compare(result, reference, signals)

    return check


def example_cases(quick):
    import msl_elastogap
    import msl_friction
    import msl_generation_of_fmus
    import msl_preload

    preload_signals = msl_preload.SIGNALS[:6]  # the MSL comparison signals
    friction_signals = ["stop1.s", "stop1.v", "stop2.s", "stop2.v", "stop1.mode", "stop2.mode"]
    cases = {
        "ElastoGap": (
            msl_elastogap.build_system,
            5.0,
            1e-3,
            msl_elastogap.SIGNALS,
            _dymola("ElastoGap", msl_elastogap.SIGNALS),
            "Dymola",
        ),
        "GenerationOfFMUs": (
            msl_generation_of_fmus.build_system,
            1.0,
            1e-3,
            msl_generation_of_fmus.SIGNALS,
            _dymola("GenerationOfFMUs", msl_generation_of_fmus.SIGNALS),
            "Dymola",
        ),
        "Friction": (
            msl_friction.build_system,
            5.0,
            1e-3,
            friction_signals,
            _friction_check(friction_signals),
            "monolithic",
        ),
        "PreLoad": (
            msl_preload.build_system,
            100.0,
            0.05,
            preload_signals,
            _dymola("PreLoad", preload_signals),
            "Dymola",
        ),
    }
    if quick:  # explicit coupling of PreLoad needs ~1e6 steps for 100 s: its first 2 s only
        cases["PreLoad (first 2 s)"] = (
            msl_preload.build_system,
            2.0,
            0.05,
            preload_signals,
            _dymola("PreLoad", preload_signals, 2.0),
            "Dymola",
        )
    return cases


def largest_passing(fmu, case, coupling, ladder, name=""):
    """The largest step of the ladder that passes (PreLoad on the experiment's 0.05 s output grid,
    the grid of its MSL reference result; the others at most stop/2000)."""
    build, stop, interval, signals, check, _ = case
    tried = []
    for h in ladder:
        system = build(fmu)
        scheme = configure(system, coupling)
        t0 = time.perf_counter()
        try:
            result = system.simulate(
                stop,
                h,
                output_interval=max(
                    h, interval if name == "PreLoad" else min(interval, stop / 2000)
                ),
                outputs=signals,
                scheme=scheme,
            )
            wall = time.perf_counter() - t0
            report = check(result)
            passed, worst = report.passed, max((c.worst for c in report.values()), default=0.0)
        except CosimError as exc:
            wall, passed, worst = (
                time.perf_counter() - t0,
                False,
                f"failed: {str(exc).splitlines()[0]}",
            )
        tried.append({"step": h, "passed": passed, "wall": wall, "worst": worst})
        if passed:
            return {"step": h, "wall": wall, "tried": tried}
    return {"step": None, "wall": None, "tried": tried}


# the adaptive master's tolerance and output grid per example, as the examples use them (the steps end
# on the output grid: a fine grid bounds the step)
ADAPTIVE = {
    "ElastoGap": (1e-4, 5e-3),
    "PreLoad": (1e-4, 0.05),
    "GenerationOfFMUs": (1e-4, 5e-4),
    "Friction": (1e-4, 5e-4),
}


def adaptive_run(fmu, name, case):
    """The example in the adaptive master (no step): passed, wall, steps."""
    build, stop, interval, signals, check, _ = case
    rtol, grid = ADAPTIVE[name]
    system = build(fmu)
    t0 = time.perf_counter()
    try:
        result = system.simulate(
            stop, output_interval=grid, outputs=signals, rtol=rtol, atol=rtol * 1e-2
        )
        wall = time.perf_counter() - t0
        report = check(result)
        extra = {}
        if (
            name == "PreLoad"
        ):  # the project's monolithic scipy solution of the same 100 s, same grid, timed here
            t1 = time.perf_counter()
            monolithic.preload(result.time, stop_time=stop)
            extra = {"scipy_wall": time.perf_counter() - t1}
            extra["ratio_vs_scipy"] = wall / extra["scipy_wall"]
        return {
            **extra,
            "rtol": rtol,
            "output_interval": grid,
            "passed": bool(report.passed),
            "wall": wall,
            "worst": max((c.worst for c in report.values()), default=0.0),
            "accepted": sum(x.accepted for x in result.steps),
            "rejected": sum(not x.accepted for x in result.steps),
            "fmu_steps": fmu_steps(result.steps),
        }
    except CosimError as exc:
        return {
            "rtol": rtol,
            "output_interval": grid,
            "passed": False,
            "wall": time.perf_counter() - t0,
            "failed": str(exc).splitlines()[0],
        }


QUICK_EXAMPLES = ("PreLoad", "PreLoad (first 2 s)", "ElastoGap")
QUICK_LADDER = {
    "PreLoad": [5e-3],
    "PreLoad (first 2 s)": [5e-5, 2e-5],
    "ElastoGap": [1e-2, 1e-3, 5e-4],
}


def msl_examples(fmu, quick):
    out = {}
    for name, case in example_cases(quick).items():
        if quick and name not in QUICK_EXAMPLES:
            continue
        out[name] = {"stop_time": case[1], "reference": case[5]}
        for coupling in EXAMPLE_COUPLINGS:
            if quick and name == "PreLoad" and coupling != "implicit":
                continue  # explicit couplings need ~1e6 steps for 100 s: their first 2 s below
            if quick and name == "PreLoad (first 2 s)" and coupling != "plain":
                out[name][coupling] = {
                    "step": None,
                    "wall": None,
                    "tried": [],
                    "not_run": "quick mode",
                }
                continue
            ladder = QUICK_LADDER[name] if quick else LADDER
            out[name][coupling] = largest_passing(fmu, case, coupling, ladder, name.split(" (")[0])
            print(
                f"   {name:20s} {coupling:9s} largest passing step {out[name][coupling]['step']}",
                flush=True,
            )
        if name != "PreLoad (first 2 s)":
            out[name]["adaptive"] = adaptive_run(fmu, name, case)
    if quick:  # PreLoad plain and foh, extrapolated from its first 2 s
        short = out.pop("PreLoad (first 2 s)")
        for coupling in ("plain", "foh"):
            run = dict(short[coupling])
            if run.get("not_run"):
                out["PreLoad"][coupling] = run
                continue
            if run["wall"] is not None:
                run["wall"] *= 100.0 / 2.0
            run["extrapolated_from"] = "the first 2 s (wall time x 50)"
            out["PreLoad"][coupling] = run
        out["PreLoad"]["first_2s"] = short
    return out


def print_examples(res):
    print("\n2. MSL examples: largest passing communication step (2e-3 tube) and wall time there")
    print(
        f"{'example':18s} {'reference':10s} | " + " | ".join(f"{c:>22s}" for c in EXAMPLE_COUPLINGS)
    )
    for name, r in res.items():
        cells = []
        for c in EXAMPLE_COUPLINGS:
            x = r[c]
            note = "*" if x.get("extrapolated_from") else ""
            cells.append(
                ("not run (quick)" if x.get("not_run") else "none passed").rjust(22)
                if x["step"] is None
                else f"{x['step']:8.0e} s {x['wall']:8.2f} s{note:1s}".rjust(22)
            )
        print(f"{name:18s} {r['reference']:10s} | " + " | ".join(cells))
    print("   adaptive master (no step; the examples' rtol, atol = rtol*1e-2, and output grid):")
    for name, r in res.items():
        a = r.get("adaptive", {})
        if a.get("not_run"):
            print(f"   {name:18s} not run ({a['not_run']})")
        elif "failed" in a:
            print(f"   {name:18s} failed: {a['failed'][:100]}")
        elif a:
            fixed = r["implicit" if name == "PreLoad" else "foh"]
            steps = f"; best fixed step ({'implicit' if name == 'PreLoad' else 'foh'}): " + (
                f"{fixed['step']:g} s, {round(r['stop_time'] / fixed['step'])} doStep calls"
                if fixed["step"]
                else "none passed on the ladder"
            )
            scipy = (
                f"; {a['ratio_vs_scipy']:.1f}x the monolithic scipy solution ({a['scipy_wall']:.2f} s, same run)"
                if "ratio_vs_scipy" in a
                else ""
            )
            print(
                f"   {name:18s} rtol {a['rtol']:g}, grid {a['output_interval']:g} s: "
                f"{'passed' if a['passed'] else 'FAILED'}, wall {a['wall']:.2f} s{scipy}, "
                f"{a['accepted']} accepted + {a['rejected']} rejected steps, {a['fmu_steps']} doStep calls per FMU"
                f"{steps}"
            )
    if any(r["plain"].get("extrapolated_from") for r in res.values()):
        print("  * wall time extrapolated from the first 2 s (quick mode)")


# ---- 3. cost per communication step ------------------------------------------------------------


class _Raw:
    """An FMU instance driven through the raw FMI C functions (fmpy's ctypes bindings)."""

    def __init__(self, path, name):
        from fmpy import read_model_description
        from fmpy.fmi2 import FMU2Slave

        self.md = read_model_description(path)
        self.dir = extracted(path)  # removed when the process exits
        self.slave = FMU2Slave(
            guid=self.md.guid,
            unzipDirectory=self.dir,
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.slave.instantiate()
        self.slave.setupExperiment(startTime=0.0)
        self.slave.enterInitializationMode()
        self.slave.exitInitializationMode()
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.t = 0.0  # the FMU's time: each loop continues from it (FMUs refuse another communication point)

    def loop(self, inputs, outputs, rows, h, n):
        """Seconds per step of: set inputs, doStep, get outputs."""
        from fmpy.fmi2 import fmi2Real, fmi2ValueReference

        f, c = self.slave._functions, self.slave.component
        set_real, do_step, get_real = f["fmi2SetReal"], f["fmi2DoStep"], f["fmi2GetReal"]
        ni, no = len(inputs), len(outputs)
        vi = (fmi2ValueReference * ni)(*[self.vr[x] for x in inputs])
        vo = (fmi2ValueReference * no)(*[self.vr[x] for x in outputs])
        out = (fmi2Real * no)()
        bufs = [(fmi2Real * ni)(*row) for row in rows]
        m, t = len(bufs), self.t
        start = time.perf_counter()
        for k in range(n):
            if ni:
                set_real(c, vi, ni, bufs[k % m])
            if do_step(c, t, h, 1) > 1:
                raise RuntimeError(f"doStep failed at t = {t}")
            get_real(c, vo, no, out)
            t += h
        self.t = t
        return (time.perf_counter() - start) / n

    def free(self):
        self.slave.terminate()
        self.slave.freeInstance()


def trivial_fmu(directory):
    from pythonfmu.builder import FmuBuilder

    cwd = os.getcwd()
    try:
        os.chdir(directory)
        return FmuBuilder.build_FMU(ROOT / "benchmarks" / "trivial_slave.py", dest=directory)
    finally:
        os.chdir(cwd)


CONNECTOR_PREFIXES = ("flange", "flange_a", "flange_b", "ctr1", "ctr2")


def fmu_cost(fmu, quick):
    n, rounds = (1000, 3) if quick else (20000, 7)
    with tempfile.TemporaryDirectory() as tmp:
        trivial = _Raw(trivial_fmu(tmp), "trivial")
        results = {}
        for name in sorted(fmu):
            raw = _Raw(fmu[name], name)
            experiment = crosscheck.experiment(fmu[name])[4]
            inputs = list(experiment)
            outputs = [
                v.name
                for v in raw.md.modelVariables
                if v.causality == "output"
                and v.type == "Real"
                and v.name.split(".")[0] in CONNECTOR_PREFIXES
                and "." in v.name
            ] or ["y"]
            h = float(raw.md.defaultExperiment.stepSize)
            rows = [[experiment[x](k * h) for x in inputs] for k in range(1000)]
            shape = ([f"u{k}" for k in range(len(inputs))], [f"y{k}" for k in range(len(outputs))])
            own, floor = [], []
            for _ in range(rounds):  # interleaved: both see the same machine load
                own.append(raw.loop(inputs, outputs, rows, h, n))
                floor.append(trivial.loop(*shape, rows, h, n))
            raw.free()
            results[name] = {
                "inputs": len(inputs),
                "outputs": len(outputs),
                "us": 1e6 * min(own),
                "trivial_us": 1e6 * min(floor),
                "ratio": min(own) / min(floor),
            }
        trivial.free()
    return results


def print_cost(res):
    print(
        "\n3. Cost per communication step (set inputs, doStep, get flange outputs; min over rounds)"
    )
    print(f"{'FMU':24s} {'in':>3s} {'out':>3s} {'us/step':>9s} {'trivial':>9s} {'ratio':>6s}")
    for name, r in res.items():
        print(
            f"{name:24s} {r['inputs']:3d} {r['outputs']:3d} {r['us']:9.2f} {r['trivial_us']:9.2f} {r['ratio']:6.2f}"
        )


# ---- 4. TranslationalHardstop default impact --------------------------------------------------


def hardstop_impact(fmu, h=1e-3, stop=0.5):
    t_ref = np.linspace(0.0, stop, 5001)
    ref = monolithic.hardstop_mass(t_ref, s0=0.49, v0=1.0)
    reference = Result(["time", "mass.s", "mass.v"], np.column_stack([t_ref, ref["s"], ref["v"]]))
    out = {"step": h, "stop_time": stop}
    for coupling in HARDSTOP:
        s = System()
        s.add("wall", fmu["Fixed"])
        s.add("stop", fmu["TranslationalHardstop"], **({"m_b": 1.0} if coupling in INERTIA else {}))
        s.add("mass", fmu["Mass"], m=1.0, s_start=0.49, v_start=1.0)
        s.connect("wall.flange", "stop.flange_a")
        s.connect("stop.flange_b", "mass.flange_a")
        scheme = configure(s, coupling) if coupling != "adaptive" else None
        t0 = time.perf_counter()
        try:
            r = s.simulate(stop, h if scheme else None, outputs=["mass.s", "mass.v"], scheme=scheme)
            wall = time.perf_counter() - t0
            report = compare(r, reference, ["mass.s", "mass.v"])
            out[coupling] = {
                "wall": wall,
                "penetration": float(np.max(r["mass.s"]) - 0.5),
                "v_end": float(r["mass.v"][-1]),
                "tube": bool(report.passed),
            }
            if r.steps is not None:
                out[coupling]["fmu_steps"] = fmu_steps(r.steps)
        except CosimError as exc:
            out[coupling] = {"wall": time.perf_counter() - t0, "failed": str(exc).splitlines()[0]}
    return out


def print_hardstop(res):
    print(
        f"\n4. TranslationalHardstop defaults (c = d = 1e10, b = 1 m): 1 kg at 1 m/s, step {res['step']:g} s, "
        f"{res['stop_time']:g} s"
    )
    for c in HARDSTOP:
        r = res[c]
        if "failed" in r:
            print(f"   {c:9s} failed after {r['wall']:.2f} s: {r['failed'][:110]}")
        else:
            steps = f", {r['fmu_steps']} doStep calls per FMU" if "fmu_steps" in r else ""
            print(
                f"   {c:9s} penetration {r['penetration']:.3g} m, v at the end {r['v_end']:.3g} m/s, "
                f"tube {'passed' if r['tube'] else 'FAILED'}, wall {r['wall']:.3f} s{steps}"
            )


# ---- goals ------------------------------------------------------------------------------------


def goals(res):
    pre = res["examples"]["PreLoad"]
    best = pre["adaptive"]
    plain = pre["plain"]
    half = res["split_impact"]["rows"][-1]
    worst = max(res["fmu_cost"].items(), key=lambda kv: kv[1]["ratio"])
    return {
        "preload_wall": {
            "holds": bool(best.get("passed") and best["wall"] < GOAL_WALL),
            "value": best["wall"],
            "ratio_vs_scipy": best.get("ratio_vs_scipy"),
            "plain_wall": plain["wall"],
            "plain_step": plain["step"],
            "ratio_vs_plain": None
            if plain["wall"] is None or not best.get("passed")
            else plain["wall"] / best["wall"],
            "text": f"PreLoad passes the MSL tube in < {GOAL_WALL:g} s wall (adaptive master, no step given)",
        },
        "split_restitution": {
            "holds": bool(abs(half["inertia"]["error"]) < GOAL_RESTITUTION),
            "value": half["inertia"]["error"],
            "step": half["step"],
            "plain_error": half["plain"]["error"],
            "ratio_vs_plain": abs(half["plain"]["error"])
            / max(abs(half["inertia"]["error"]), 1e-16),
            "text": f"split impact restitution within {100 * GOAL_RESTITUTION:g}% at h = Tc/2 (inertia)",
        },
        "fmu_cost": {
            "holds": bool(worst[1]["ratio"] <= GOAL_COST),
            "value": worst[1]["ratio"],
            "worst": worst[0],
            "text": f"every FMU's per-step cost within {GOAL_COST:g}x of the trivial slave",
        },
    }


def print_goals(g):
    print("\nGoals")
    p, s, c = g["preload_wall"], g["split_restitution"], g["fmu_cost"]
    ratio = (
        "n/a" if p["ratio_vs_plain"] is None else f"{p['ratio_vs_plain']:.0f}x faster than plain"
    )
    plain = (
        "no passing step"
        if p["plain_wall"] is None
        else f"{p['plain_wall']:.1f} s at {p['plain_step']:g} s"
    )
    scipy = (
        ""
        if p["ratio_vs_scipy"] is None
        else f"{p['ratio_vs_scipy']:.1f}x the monolithic scipy solution; "
    )
    print(
        f"  [{'x' if p['holds'] else ' '}] {p['text']}: {p['value']:.2f} s ({scipy}plain: {plain}; {ratio})"
    )
    print(
        f"  [{'x' if s['holds'] else ' '}] {s['text']}: error {100 * s['value']:+.2g}% at {s['step'] * 1e3:.2f} ms "
        f"(plain {100 * s['plain_error']:+.3g}%; {s['ratio_vs_plain']:.2g}x smaller)"
    )
    print(f"  [{'x' if c['holds'] else ' '}] {c['text']}: worst {c['worst']} {c['value']:.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the short run the tests use")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results.json"))
    parser.add_argument("--fmus", default=str(ROOT / "fmus"))
    args = parser.parse_args(argv)
    fmu = ensure_fmus(args.fmus)
    start = time.perf_counter()
    res = {
        "mode": "quick" if args.quick else "full",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    print(f"contactfmu benchmarks ({res['mode']}), {os.cpu_count()} CPUs", flush=True)
    res["split_impact"] = split_impact(fmu, args.quick)
    print_split(res["split_impact"])
    print("\n2. MSL examples (ladder search) ...", flush=True)
    res["examples"] = msl_examples(fmu, args.quick)
    print_examples(res["examples"])
    res["fmu_cost"] = fmu_cost(fmu, args.quick)
    print_cost(res["fmu_cost"])
    res["hardstop"] = hardstop_impact(fmu)
    print_hardstop(res["hardstop"])
    res["goals"] = goals(res)
    print_goals(res["goals"])
    res["wall_total"] = time.perf_counter() - start
    Path(args.out).write_text(json.dumps(res, indent=1, default=float))
    print(f"\ntotal {res['wall_total']:.0f} s -> {args.out}")
    return 0 if all(g["holds"] for g in res["goals"].values()) else 1


if __name__ == "__main__":
    examples.exit_now(main())
