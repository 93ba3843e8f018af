"""The inertia-aware elements (ElastoGap, TranslationalHardstop with m_a/m_b; EndStop with m1/m2)
give the same physics whatever the master: Gauss-Seidel (set inputs, read outputs, step: the
project's master) and Jacobi (step, read outputs, set inputs: libcosim itself, through
libcosimpy, and the project's master with scheme="jacobi"), at 1 ms and 0.1 ms.

Each case is a body (the project's Mass FMU, 1 kg) on the element, against analytic values:
- TranslationalHardstop c = 1e5, d = 20 (Kelvin-Voigt while in the stop: the damper pulls): rebound
  exp(-zeta*pi/sqrt(1 - zeta^2)), zeta = d/(2*sqrt(c*m)) = 0.905384;
- ElastoGap c = 1e5, d = 20, n = 1 (bounded damper): the closed form of test_documented_elastogap,
  0.909008;
- TranslationalHardstop at its documented defaults c = d = 1e10: plastic (overdamped, time constants
  1e-10 s and 1 s), the body stopped at the stop, penetration below 1e-4 m, no energy gain;
- EndStop Rigid End Stop ci = 0.8, a 1 kg mass dropped 0.1 m under g: apex heights 0.1*ci^(2k).
The issue's bar is 1 % and no energy gain; the measured errors are far below (noted per case), and the
tolerances are set about 10x above them.
"""

import os
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description
from fmu_helpers import Slave
from impacts import ELASTOGAP, KELVIN_VOIGT, impact_system

from contactfmu.cosim import System
from contactfmu.cosim.libcosim import run_system

G = 9.81
MASTERS = ("gauss-seidel", "jacobi", "libcosim", "c-gauss-seidel", "c-jacobi")
STEPS = (1e-3, 1e-4)
HOST_SRC = Path(__file__).parent / "host" / "fmi2_coupled.c"


@pytest.fixture(scope="module")
def c_master(tmp_path_factory):
    """tests/host/fmi2_coupled.c, a fixed-step master in C (plain FMI 2.0 C API, dlopen), compiled."""
    exe = tmp_path_factory.mktemp("coupled") / "fmi2_coupled"
    subprocess.run(
        [
            os.environ.get("CC", "gcc"),
            "-std=c99",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(exe),
            str(HOST_SRC),
            "-ldl",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return exe


def run_c(exe, system, outputs, stop, h, jacobi, held, tmp):
    """The System's FMUs, parameters and connections (plain copies, one element per input) run by the
    C master; held: {"inst.input": value} set before every exchange."""
    names = list(system.instances)
    args, mds = [], {}
    for k, name in enumerate(names):
        inst = system.instances[name]
        md = mds[name] = read_model_description(str(inst.path))
        unzip = tmp / name
        with zipfile.ZipFile(inst.path) as z:
            z.extractall(unzip)
        args += ["-f", f"{unzip},{md.coSimulation.modelIdentifier},{md.guid}"]
        kinds = {v.name: v.type for v in md.modelVariables}
        for pname, value in inst.values.items():
            assert kinds[pname] in ("Real", "Integer")
            args += [
                "-p" if kinds[pname] == "Real" else "-n",
                f"{k}:{vr(md, pname)}={float(value)!r}",
            ]

    def ref(full):
        inst, var = full.split(".", 1)
        return names.index(inst), vr(mds[inst], var)

    for src, dst in copies(system):
        (k, out), (j, inp) = ref(src), ref(dst)
        args += ["-c", f"{k}:{out}>{j}:{inp}"]
    for dst, value in held.items():
        j, inp = ref(dst)
        args += ["-u", f"{j}:{inp}={value!r}"]
    for o in outputs:
        k, v = ref(o)
        args += ["-o", f"{k}:{v}"]
    out = tmp / "out.csv"
    run = subprocess.run(
        [str(exe), *(["-j"] if jacobi else []), *args, repr(stop), repr(h), str(out)],
        env={},
        capture_output=True,
        text=True,
        timeout=300,
    )  # env -i: the FMUs load libpython themselves
    assert run.returncode == 0, run.stderr[-3000:]
    data = np.loadtxt(out, delimiter=",", ndmin=2)
    return {n: data[:, i + 1] for i, n in enumerate(outputs)}


def copies(system):
    """The plain copies (output, input) of the System's connections: motion from each inertial flange
    to its compliant flange, the compliant force back (one element per node here), the signals."""
    out = []
    for si, sf, targets in system.node_links():
        assert len(targets) == 1 and targets[0][2] == 0.0
        ti, tf, _ = targets[0]
        for what in ("s", "v", "a"):
            out.append((f"{si.name}.{si.port(sf, what)}", f"{ti.name}.{ti.port(tf, what)}"))
        out.append((f"{ti.name}.{ti.port(tf, 'f')}", f"{si.name}.{si.port(sf, 'f')}"))
    return out + list(system.signals)


@pytest.fixture
def cm(c_master, tmp_path):
    return c_master, tmp_path


def vr(md, name):
    return next(v.valueReference for v in md.modelVariables if v.name == name)


def run(system, outputs, stop, h, master, inputs=None, c_master=None):
    if master.startswith("c-"):
        exe, tmp = c_master
        return run_c(
            exe,
            system,
            outputs,
            stop,
            h,
            master == "c-jacobi",
            {k: f(0.0) for k, f in (inputs or {}).items()},
            tmp,
        )
    if master == "libcosim":
        r = run_system(system, outputs, stop, h, inputs=inputs)
    else:
        r = system.simulate(stop, h, scheme=master, outputs=outputs, inputs=inputs)
    return {n: np.asarray(r[n]) for n in outputs}


def impact(fmu_dir, element, params, s0, h, master, stop=0.05, c_master=None):
    return run(
        impact_system(fmu_dir, element, params, s0),
        ["mass.s", "mass.v"],
        stop,
        h,
        master,
        c_master=c_master,
    )


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("master", MASTERS)
def test_hardstop_rebound_is_kelvin_voigt_in_any_master(fmu_dir, cm, master, h):
    """Stops at +-1 m (b = 2), the mass 0.5 mm from the lower one: the contact starts inside a step.
    Measured: 0.905384 to 2e-13 relative in all three masters at both steps (before: Jacobi +8 % at
    1 ms, +101 % at 0.1 ms)."""
    r = impact(
        fmu_dir,
        "TranslationalHardstop",
        dict(b=2.0, c=1e5, d=20.0, m_b=1.0),
        -0.9995,
        h,
        master,
        c_master=cm,
    )
    assert r["mass.v"][-1] == pytest.approx(KELVIN_VOIGT, rel=1e-11)
    # never faster than it came, but for the first steps of a run shorter than the DefaultExperiment step
    # (the first step is planned with that step: a contact 5 steps ahead at 0.1 ms is within 1.5 planned
    # steps): measured 1 + 8.4e-5 at 0.1 ms, in every master
    assert np.abs(r["mass.v"]).max() <= 1.0 + 2e-4


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("master", MASTERS)
def test_elastogap_rebound_is_the_msl_law_in_any_master(fmu_dir, cm, master, h):
    """The mass at the contact point at the start (s_rel0 = 0). Measured: 0.909008 to 1e-13 relative
    in all three masters at both steps (before: Jacobi +9 % at 1 ms)."""
    r = impact(fmu_dir, "ElastoGap", dict(c=1e5, d=20.0, m_b=1.0), 0.0, h, master, c_master=cm)
    assert r["mass.v"][-1] == pytest.approx(ELASTOGAP, rel=1e-11)
    assert np.abs(r["mass.v"]).max() <= 1.0 + 2e-4  # (as above)


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("master", MASTERS)
def test_hardstop_defaults_stop_the_body_in_any_master(fmu_dir, cm, master, h):
    """Documented defaults c = d = 1e10 (plastic). Measured: penetration 1.0e-10 m (1 ms) and
    1.1e-10 m (0.1 ms), speed after the hit below 1.2e-10 m/s, equal in the three masters (before:
    Jacobi 5 m/s at 1 ms, an overflow at 0.1 ms)."""
    r = impact(
        fmu_dir,
        "TranslationalHardstop",
        dict(b=2.0, m_b=1.0),
        -0.9995,
        h,
        master,
        stop=0.3,
        c_master=cm,
    )
    penetration = -1.0 - r["mass.s"].min()
    assert penetration < 1e-9  # documented bar: 1e-4 m
    late = r["mass.v"][len(r["mass.v"]) // 3 :]
    assert np.abs(late).max() < 1e-9  # stopped: no energy gain


def drop(fmu_dir, h, master, stop=1.0, c_master=None):
    """A 1 kg mass below a Rigid End Stop (ci = 0.8, m1 = 1 kg) at dx = ctr1.x - ctr2.x = -0.1 m, pressed
    into stop 1 (dx >= l1 = 0) by 9.81 N: the drop of 0.1 m under g."""
    s = System()
    s.add("ground", fmu_dir / "Fixed.fmu")
    s.add("stop", fmu_dir / "EndStop.fmu", mode=1, kind=3, ci=0.8, m1=1.0, l1=0.0, l2=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=-0.1, v_start=0.0)
    s.add("force", fmu_dir / "Force.fmu")
    s.connect("mass.flange_b", "stop.ctr1")
    s.connect("ground.flange", "stop.ctr2")
    s.connect("force.flange", "mass.flange_a")
    return run(
        s, ["mass.s", "mass.v"], stop, h, master, inputs={"force.f": lambda t: G}, c_master=c_master
    )


def apexes(s, v, count):
    """Heights below the stop (at 0) where the velocity turns from away (< 0) to towards (>= 0): the
    lower of the two samples around the turn, within g*h^2/8 of the apex (a sample within h/2 of it)."""
    turns = [i for i in range(1, len(v)) if v[i - 1] < 0.0 <= v[i]]
    return np.array([-min(s[i - 1], s[i]) for i in turns[:count]])


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("master", MASTERS)
def test_endstop_rigid_bounces_keep_their_apex_heights_in_any_master(fmu_dir, cm, master, h):
    """Apex heights 0.1*0.64^k, k = 1..4, sampled at the communication points: within g*h^2/8 of the
    true apex (the sampling, not the coupling). Measured: equal in the three masters, largest error
    7.0e-7 m at 1 ms (g*h^2/8 = 1.2e-6 m), 2.2e-9 m at 0.1 ms (before: Jacobi 1.0 m, 0.94 m, then
    divergence at 1 ms). The body never rises above the stop by more than the impact spread."""
    r = drop(fmu_dir, h, master, c_master=cm)
    got = apexes(r["mass.s"], r["mass.v"], 4)
    exact = 0.1 * 0.64 ** np.arange(1, 5)
    assert len(got) == 4
    assert np.abs(got - exact).max() <= G * h * h / 8.0
    assert r["mass.s"].max() < 2e-3 * (h / 1e-3)  # impacts spread over two steps


@pytest.mark.parametrize("h", (1e-3,))
def test_masters_agree_step_by_step(fmu_dir, cm, h):
    """Beyond the figures: the Jacobi master (libcosim) and the Gauss-Seidel master give the same
    trajectories, since the element models the bodies over the step the Jacobi master hides from it.
    Measured: largest difference 4e-16 m in position for the hardstop at its defaults."""
    runs = [
        impact(
            fmu_dir,
            "TranslationalHardstop",
            dict(b=2.0, m_b=1.0),
            -0.9995,
            h,
            m,
            stop=0.1,
            c_master=cm,
        )
        for m in MASTERS
    ]
    n = 100  # the rows after each step (libcosim has no t = 0 row)
    for other in runs[1:]:
        assert np.abs(other["mass.s"][-n:] - runs[0]["mass.s"][-n:]).max() < 1e-12
        assert np.abs(other["mass.v"][-n:] - runs[0]["mass.v"][-n:]).max() < 1e-9


def in_turn(fmu_dir, element, params, s0, h, element_first, stop=0.05):
    """Fixed -- element -- Mass (1 kg at -1 m/s from s0), each FMU in turn: set its inputs from the
    other's latest outputs, step, read its outputs (fmu-manipulation-toolbox's sequential
    container), through fmpy; the mass's velocity at the end."""
    el = Slave(fmu_dir / f"{element}.fmu").init(**params, flange_b__s=s0, flange_b__v=-1.0)
    mass = Slave(fmu_dir / "Mass.fmu").init(m=1.0, s_start=s0, v_start=-1.0)
    try:
        motion, force = [s0, -1.0], el.get("flange_b.f")
        for k in range(round(stop / h)):
            for fmu in (el, mass) if element_first else (mass, el):
                if fmu is el:
                    el.set(flange_b__s=motion[0], flange_b__v=motion[1])
                    el.fmu.doStep(k * h, h)
                    force = el.get("flange_b.f")
                else:
                    mass.set(flange_a__f=force)
                    mass.fmu.doStep(k * h, h)
                    motion = mass.get("s", "v")
        return motion[1]
    finally:
        el.close()
        mass.close()


@pytest.mark.parametrize("element_first", [True, False], ids=["element first", "mass first"])
@pytest.mark.parametrize(
    "element, params, s0, exact",
    [
        ("ElastoGap", dict(c=1e5, d=20.0, m_b=1.0), 0.005, ELASTOGAP),
        ("TranslationalHardstop", dict(b=2.0, c=1e5, d=20.0, m_b=1.0), -0.9995, KELVIN_VOIGT),
    ],
    ids=["ElastoGap", "TranslationalHardstop"],
)
def test_each_fmu_in_turn_costs_the_documented_rebound(
    fmu_dir, element, params, s0, exact, element_first
):
    """Not an exact order (the component pages and docs/contacts.md say so): the rebound is 4.8 %
    short at h = 0.1 ms and 37 % short at 1 ms in either order (ElastoGap: the body 5 mm before the
    contact). Measured: ElastoGap -4.83 % and
    -36.6 %, TranslationalHardstop -4.76 % / -4.83 % and -37.2 % / -37.3 %."""
    for h, short in ((1e-4, 0.048), (1e-3, 0.37)):
        error = in_turn(fmu_dir, element, params, s0, h, element_first) / exact - 1.0
        assert error == pytest.approx(-short, abs=0.01), h
