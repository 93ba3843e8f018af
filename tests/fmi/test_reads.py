"""A read never changes what follows (FMI 3.0.2, "Selective Computation of Variables": a get may
compute, not decide): the contact FMUs that integrate their bodies' contact motion (EndStop with
m1/m2, ElastoGap and TranslationalHardstop with m_a/m_b) give the same trajectory bit for bit
whichever pattern of reads of their held force the importer makes (none, after every step, once,
on the first steps only, every other step), in FMI 2.0 and 3.0 through fmpy, and in fmusim whether
it records every variable or one.

The element takes the force read since its last step as the one the bodies received (a Jacobi
master reads it after the step and then sets the new inputs); a read is taken by the next step
only. Here no input is set after the start, so every read value is the force the element last
computed, and no pattern may differ from none."""

import csv
import os
import subprocess

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

# (FMU, parameters and start inputs, held-force output, step size, steps): two bodies closing at
# 1 m/s onto a contact, the bodies' inertias given to the element
CASES = {
    "EndStop rigid": (
        "EndStop",
        {
            "mode": 1,
            "kind": 3,
            "ci": 0.7,
            "l1": 0.3,
            "l2": 0.2,
            "m1": 2.0,
            "m2": 3.0,
            "ctr1.v": 1.0,
        },
        "ctr1.F",
        0.07,
        20,
    ),
    "EndStop elastic": (
        "EndStop",
        {"mode": 2, "k1": 1e4, "b1": 20.0, "l1": 0.01, "m1": 2.0, "m2": 3.0, "ctr1.v": 1.0},
        "ctr1.F",
        2e-3,
        40,
    ),
    "ElastoGap": (
        "ElastoGap",
        {"c": 1e5, "d": 20.0, "m_a": 1.0, "m_b": 2.0, "flange_a.v": 1.0, "flange_b.s": 0.005},
        "f",
        1e-3,
        30,
    ),
    "TranslationalHardstop": (
        "TranslationalHardstop",
        {"b": 0.01, "c": 1e5, "d": 50.0, "m_a": 1.0, "m_b": 2.0, "flange_a.v": 1.0},
        "F",
        1e-3,
        30,
    ),
}
PATTERNS = {
    "every step": lambda k: True,
    "once": lambda k: k == 0,
    "first four steps": lambda k: k < 4,
    "every other step": lambda k: k % 2 == 1,
}


class Instance:
    """One FMU instance through fmpy, FMI 2.0 or 3.0, variables by name."""

    def __init__(self, path, fmi3):
        md = read_model_description(str(path))
        self.vars = {v.name: v for v in md.modelVariables}
        self.outputs = [v.name for v in md.modelVariables if v.causality == "output"]
        self.fmi3 = fmi3
        kind = FMU3Slave if fmi3 else FMU2Slave
        self.fmu = kind(
            guid=md.guid if not fmi3 else md.instantiationToken,
            unzipDirectory=extract(str(path)),
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName="reads",
        )
        self.fmu.instantiate()
        if not fmi3:
            self.fmu.setupExperiment(startTime=0.0)

    def set(self, name, value):
        var = self.vars[name]
        vr = [var.valueReference]
        if var.type in ("Real", "Float64"):
            (self.fmu.setFloat64 if self.fmi3 else self.fmu.setReal)(vr, [float(value)])
        elif var.type == "Boolean":
            self.fmu.setBoolean(vr, [bool(value)])
        else:
            (self.fmu.setInt32 if self.fmi3 else self.fmu.setInteger)(vr, [int(value)])

    def get(self, names):
        vrs = [self.vars[n].valueReference for n in names]
        reals = [n for n in names if self.vars[n].type in ("Real", "Float64")]
        assert len(reals) == len(names)
        return list((self.fmu.getFloat64 if self.fmi3 else self.fmu.getReal)(vrs))

    def real_outputs(self):
        return self.get([n for n in self.outputs if self.vars[n].type in ("Real", "Float64")])


def trajectory(path, fmi3, case, pattern, until):
    """All Real outputs after `until` steps; the held force read before the steps `pattern`
    selects (and, for EndStop, the displacement difference, not a held-force output, after every
    step)."""
    _, values, held, h, _ = case
    fmu = Instance(path, fmi3)
    fmu.fmu.enterInitializationMode()
    for name, value in values.items():
        fmu.set(name, value)
    fmu.fmu.exitInitializationMode()
    seen, t = [], 0.0
    for k in range(until):
        if pattern(k):
            fmu.get([held])
        fmu.fmu.doStep(t, h)
        t += h
        if "dx" in fmu.vars:
            seen.append(fmu.get(["dx"])[0])
    seen += fmu.real_outputs()
    fmu.fmu.terminate()
    fmu.fmu.freeInstance()
    return seen


@pytest.mark.parametrize("fmi3", [False, True], ids=["FMI 2.0", "FMI 3.0"])
@pytest.mark.parametrize("case", list(CASES))
def test_no_pattern_of_reads_changes_the_trajectory(fmu_dir, fmu3_dir, fmi3, case):
    name, _, _, _, steps = CASES[case]
    path = (fmu3_dir if fmi3 else fmu_dir) / f"{name}.fmu"
    for until in (1, 3, steps // 2, steps):
        unread = trajectory(path, fmi3, CASES[case], lambda k: False, until)
        for label, pattern in PATTERNS.items():
            assert trajectory(path, fmi3, CASES[case], pattern, until) == unread, (label, until)


def closed_form_dx(h, steps):
    """dx after each of `steps` steps of h: two free bodies 1 m/s apart between stops at +0.3 and
    -0.2 m, each impact reversing the relative velocity times ci = 0.7."""
    x, v, t, dx = 0.0, 1.0, 0.0, []
    for k in range(1, steps + 1):
        while True:  # free flight to the next stop within (t, k*h]
            stop = 0.3 if v > 0 else -0.2
            hit = t + (stop - x) / v
            if hit > k * h:
                break
            x, v, t = stop, -0.7 * v, hit
        x, t = x + v * (k * h - t), k * h
        dx.append(x)
    return dx


def test_the_rigid_endstop_trajectory_is_the_closed_form(fmu_dir):
    """The trajectory the patterns share is the right one (4 impacts in 20 steps)."""
    _, _, _, h, steps = case = CASES["EndStop rigid"]
    dx = trajectory(fmu_dir / "EndStop.fmu", False, case, PATTERNS["once"], steps)[:steps]
    assert max(abs(a - b) for a, b in zip(dx, closed_form_dx(h, steps))) < 1e-12


TOOLS = os.environ.get("CONTACTFMU_FMI_TOOLS")


@pytest.mark.skipif(
    not TOOLS, reason="CONTACTFMU_FMI_TOOLS is not set: set it to the folder holding fmusim"
)
@pytest.mark.parametrize("fmi3", [False, True], ids=["FMI 2.0", "FMI 3.0"])
def test_fmusim_gives_the_same_displacement_recording_one_variable_or_all(
    fmu_dir, fmu3_dir, tmp_path, fmi3
):
    """fmusim (started with an empty environment: the FMU loads libpython itself) reads every
    variable at the start, then only the recorded ones: dx alone and dx among every variable (the
    held force read after every step) are the same column, the closed form's."""
    path = (fmu3_dir if fmi3 else fmu_dir) / "EndStop.fmu"
    _, values, _, h, steps = CASES["EndStop rigid"]
    columns = []
    for only in (["--output-variable", "dx"], []):
        out = tmp_path / f"out{len(columns)}.csv"
        cmd = [os.path.join(TOOLS, "fmusim"), "--interface-type", "cs"]
        cmd += ["--stop-time", repr(h * steps), "--output-interval", repr(h)]
        for name, value in values.items():
            cmd += ["--start-value", name, str(value).lower()]
        cmd += [*only, "--output-file", str(out), str(path)]
        proc = subprocess.run(cmd, env={}, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        columns.append([float(r["dx"]) for r in rows])
    assert len(columns[0]) == steps + 1
    assert columns[0] == columns[1]
    assert max(abs(a - b) for a, b in zip(columns[0][1:], closed_form_dx(h, steps))) < 1e-12
