"""A generated system (systems.Spec) as a co-simulation of the project's FMUs (cosim.System)."""

import math
from pathlib import Path

import numpy as np

from ..cosim import System

# link kinds of another FMU
FMU = {"ElastoGapHertz": "ElastoGap", "EndStopFriction": "EndStop", "EndStopRigid": "EndStop"}


def fmu_names(spec):
    """The FMU types a system needs (file names without .fmu)."""
    kinds = {"Fixed"} | {b.kind for b in spec.bodies}
    kinds |= {FMU.get(lk.kind, lk.kind) for lk in spec.links}
    if spec.drives:
        kinds |= {"Sine", "Force"}
    return sorted(kinds)


def system(spec, fmu_dir="fmus"):
    """The cosim.System of `spec` from the FMUs in `fmu_dir` (FMI 2.0 builds): every wall a Fixed,
    every body a Mass or MassWithStopAndFriction (L = 0), every link its element with flange_a
    (EndStop: ctr2) on node a and flange_b (ctr1) on node b through a rod of -rest, every drive a
    Sine into a Force on its body's flange_a."""
    fmu_dir = Path(fmu_dir)

    def fmu(kind):
        path = fmu_dir / f"{kind}.fmu"
        if not path.exists():
            raise FileNotFoundError(f"{path}: build the FMUs first (python build_fmus.py)")
        return str(path)

    s = System()
    for name, x in spec.walls.items():
        s.add(name, fmu("Fixed"), s0=x)
    for b in spec.bodies:
        s.add(b.name, fmu(b.kind), m=b.m, L=0.0, s_start=b.x, v_start=b.v, **b.params)
    for lk in spec.links:
        kind = FMU.get(lk.kind, lk.kind)
        s.add(lk.name, fmu(kind), **lk.params)
        fa, fb = ("ctr2", "ctr1") if kind == "EndStop" else ("flange_a", "flange_b")

        def node(name, side):
            return f"{name}.flange" if name in spec.walls else f"{name}.{side}"

        s.connect(node(lk.a, "flange_b"), f"{lk.name}.{fa}")
        s.connect(node(lk.b, "flange_a"), f"{lk.name}.{fb}", rod=-lk.rest)
    for d in spec.drives:
        s.add(d.name, fmu("Sine"), amplitude=d.amplitude, f=d.freq, phase=d.phase, offset=d.offset)
        force = d.name + "_force"
        s.add(force, fmu("Force"))
        s.connect(f"{d.name}.y", f"{force}.f")
        s.connect(f"{force}.flange", f"{d.body}.flange_a")
    return s


def signals(spec):
    """The compared signals: every body's position and velocity."""
    return [f"{b.name}.{q}" for b in spec.bodies for q in ("s", "v")]


def errors(result, solution, names):
    """max |result - reference| / (range of the reference) per signal, on the result's times
    (`result`: a cosim Result, or any mapping of "time" and the signals to arrays)."""
    ref = solution.at(result["time"])
    out = {}
    for name in names:
        error = float(np.max(np.abs(np.asarray(result[name]) - ref[name])))
        out[name] = error / (float(np.ptp(ref[name])) or 1.0) if math.isfinite(error) else math.inf
    return out
