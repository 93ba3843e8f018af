"""The master runs FMI 3.0 FMUs (cosim.fmi3: fmpy's FMU3Slave behind the master's FMI 2.0 calls),
alone or mixed with FMI 2.0 FMUs, and its adaptive algorithm ends a step at the time an FMU
returned early at (FMI 3.0 early return) instead of searching for the event.

The case: a 1 kg mass leaving x = 0 at 1 m/s between EndStop's rigid stops at +-0.25 m
(restitution ci = 0.5, m1 = 1 kg, nothing else acting): impacts at 0.25 s (v 1 -> -0.5),
1.25 s (-> 0.25) and 3.25 s (-> -0.125), x = 0.25 - 0.125*0.25 = 0.21875 m at 3.5 s."""

import zipfile

import numpy as np
import pytest

from contactfmu.cosim.system import System

IMPACTS = [0.25, 1.25, 3.25]


def _bounce(mass, stop, fixed):
    s = System()
    s.add("mass", mass, m=1.0, v_start=1.0)
    s.add("stop", stop, mode=1, kind=3, ci=0.5, l1=0.25, l2=0.25, m1=1.0)
    s.add("fixed", fixed)
    s.connect("mass.flange_a", "stop.ctr1")
    s.connect("stop.ctr2", "fixed.flange")
    return s


def _fmus(fmu_dir, fmu3_dir, fmi3):
    return [
        (fmu3_dir if name in fmi3 else fmu_dir) / f"{name}.fmu"
        for name in ("Mass", "EndStop", "Fixed")
    ]


@pytest.mark.parametrize("fmi3", [("Mass",), ("EndStop",), ("Mass", "EndStop", "Fixed")])
def test_fixed_steps_give_the_fmi2_systems_results_bit_for_bit(fmu_dir, fmu3_dir, fmi3):
    outputs = ["mass.s", "mass.v", "stop.ctr1.F", "stop.stop"]
    reference = _bounce(*_fmus(fmu_dir, fmu3_dir, ())).simulate(3.5, step=1e-2, outputs=outputs)
    result = _bounce(*_fmus(fmu_dir, fmu3_dir, fmi3)).simulate(3.5, step=1e-2, outputs=outputs)
    for name in ["time", *outputs]:
        np.testing.assert_array_equal(result[name], reference[name], err_msg=name)
    assert result["mass.s"][-1] == pytest.approx(0.21875, abs=1e-12)


def test_the_adaptive_master_ends_its_steps_at_the_times_the_fmu_returned_at(fmu_dir, fmu3_dir):
    """EndStop as FMI 3.0: each impact ends an accepted step, to 1e-12 s, after one attempt
    rejected for that event (the one that returned early), no bisection of the step."""
    result = _bounce(*_fmus(fmu_dir, fmu3_dir, ("EndStop",))).simulate(
        3.5, output_interval=0.1, outputs=["mass.s", "mass.v"]
    )
    ends = [step.t + step.h for step in result.steps if step.accepted]
    for impact in IMPACTS:
        assert min(abs(end - impact) for end in ends) <= 1e-12, impact
    assert sum(step.reason == "event" for step in result.steps) == len(IMPACTS)
    assert result["mass.s"][-1] == pytest.approx(0.21875, abs=1e-10)
    assert result["mass.v"][-1] == pytest.approx(-0.125, abs=1e-10)


def test_the_adaptive_master_steps_an_element_that_integrates_its_impacts_on_the_grid(fmu_dir):
    """All FMI 2.0: no body's motion to estimate an error of (the element integrates the
    contact), so the steps go from recording time to recording time, one size: the restitution
    sequence exact (steps alternating 0.07 s and 0.03 s made it grow without bound, s = 1.4e17 m)."""
    result = _bounce(*_fmus(fmu_dir, None, ())).simulate(
        3.5, output_interval=0.1, outputs=["mass.s", "mass.v"]
    )
    sizes = {round(step.h, 12) for step in result.steps}
    assert sizes == {0.1}
    assert result["mass.s"][-1] == pytest.approx(0.21875, abs=1e-12)
    assert result["mass.v"][-1] == pytest.approx(-0.125, abs=1e-12)


def _renamed_terminal(src, dest, old, new):
    """A copy of the FMU whose terminal `old` is called `new` (its variables unchanged)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "terminalsAndIcons/terminalsAndIcons.xml":
                data = data.replace(
                    f'Terminal name="{old}"'.encode(), f'Terminal name="{new}"'.encode()
                )
            zout.writestr(item, data)
    return dest


def test_an_fmi3_flange_is_connected_by_its_terminal(fmu_dir, fmu3_dir, tmp_path):
    """An FMI 3.0 Mass whose terminal for flange_a is named "left": `mass.left` connects the
    variables its members name (flange_a.s, .v, .a, .f), which no naming convention finds; the
    run equals the one of the unchanged FMI 3.0 Mass connected at flange_a, and an FMI 2.0 FMU
    (connected by the naming conventions) has no flange "left"."""
    mass3 = _renamed_terminal(fmu3_dir / "Mass.fmu", tmp_path / "Mass.fmu", "flange_a", "left")

    def oscillator(mass, flange):
        s = System()
        s.add("mass", mass, m=1.0, v_start=1.0)
        s.add("spring", fmu_dir / "Spring.fmu", c=100.0)
        s.add("fixed", fmu_dir / "Fixed.fmu")
        s.connect("fixed.flange", "spring.flange_a")
        s.connect("spring.flange_b", f"mass.{flange}")
        return s.simulate(0.5, step=1e-3, outputs=["mass.s", "mass.v"])

    result = oscillator(mass3, "left")
    reference = oscillator(fmu3_dir / "Mass.fmu", "flange_a")
    for name in ("time", "mass.s", "mass.v"):
        np.testing.assert_array_equal(result[name], reference[name], err_msg=name)
    # an undamped oscillator, omega = 10 rad/s: s = sin(10 t)/10 (to the coupling's accuracy)
    assert result["mass.s"][-1] == pytest.approx(np.sin(5.0) / 10.0, abs=2e-3)
    with pytest.raises(Exception, match="left"):
        oscillator(fmu_dir / "Mass.fmu", "left")


def test_a_mass_bouncing_on_a_stop_under_gravity_has_its_impacts_at_the_closed_form_times(
    fmu_dir, fmu3_dir
):
    """A 1 kg mass dropped from 0.5 m onto EndStop's rigid stop (ci = 0.5) under g = 9.81 m/s2,
    EndStop as FMI 3.0 in the adaptive master, recording every 10 ms: its steps end at the
    impacts of the restitution sequence, t1 = sqrt(2*0.5/g), t(k+1) = t(k) + 2*ci^k*v1/g
    (v1 = g*t1), to 1e-9 s for the first eight (the FMI 2.0 EndStop, whose impacts fall inside
    the steps, ends none within 7e-4 s of them), and the mass comes to rest on the stop after
    the sequence's limit t1 + 2*ci*v1/(g*(1 - ci)). (Recording every 50 ms, a bounce's flight
    of 0.16 s spans three steps and the held forces of the coupling put the third impact 2e-3 s
    off, with early return or without.)"""
    g, e = 9.81, 0.5
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0)
    s.add("gravity", fmu_dir / "Force.fmu", f=-g)
    s.add("stop", fmu3_dir / "EndStop.fmu", mode=1, kind=3, ci=e, l1=1.0, l2=0.5, m1=1.0)
    s.add("fixed", fmu_dir / "Fixed.fmu")
    s.connect("gravity.flange", "mass.flange_b")
    s.connect("mass.flange_a", "stop.ctr1")
    s.connect("stop.ctr2", "fixed.flange")
    result = s.simulate(1.2, output_interval=0.01, outputs=["mass.s", "mass.v"])
    t1 = (2 * 0.5 / g) ** 0.5
    v1 = g * t1
    impacts = [t1]
    for k in range(1, 8):
        impacts.append(impacts[-1] + 2 * e**k * v1 / g)
    ends = [step.t + step.h for step in result.steps if step.accepted]
    for impact in impacts:
        assert min(abs(end - impact) for end in ends) <= 1e-9, impact
    rest = t1 + 2 * e * v1 / (g * (1 - e))
    after = result["time"] > rest + 0.05
    assert np.all(np.abs(result["mass.s"][after] + 0.5) <= 1e-9)
    assert np.all(np.abs(result["mass.v"][after]) <= 1e-9)


# ---- the face itself (cosim.fmi3.Fmi3Slave) on the real FMI 3.0 FMUs: the FMI 2.0 calls of the
# master reach the FMU, the statuses come back as fmi2 statuses, its messages to the instance's
# log; the exact arguments with a stand-in FMU3Slave: tests/cosim/test_fmi3_face.py


def _face(fmu3_dir, tmp_path, name, instance, early_return):
    """An Fmi3Slave of the FMI 3.0 FMU `name` as System.instantiate makes it, not instantiated;
    its value references and its log."""
    from fmpy import extract, read_model_description

    from contactfmu.cosim.fmi3 import Fmi3Slave

    path = str(fmu3_dir / f"{name}.fmu")
    md = read_model_description(path)
    log = []
    slave = Fmi3Slave(
        guid=md.guid,
        unzipDirectory=extract(path, unzipdir=str(tmp_path / instance)),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=instance,
        log=log,
        early_return=early_return,
    )
    return slave, {v.name: v.valueReference for v in md.modelVariables}, log


def test_the_face_instantiates_the_fmi3_fmu_under_the_instance_name_and_logs_to_it(
    fmu3_dir, tmp_path
):
    """The FMU is instantiated under the master's instance name (fmpy's default would be its
    model identifier), and a refusal it logs lands in that instance's log as (fmi2 status,
    message)."""
    slave, vr, log = _face(fmu3_dir, tmp_path, "Mass", "heavy", False)
    assert slave.fmu.instanceName == "heavy"
    slave.instantiate(loggingOn=False)
    slave.setupExperiment(startTime=0.0, stopTime=1.0)
    slave.enterInitializationMode()
    slave.setReal([vr["m"]], [0.0])
    with pytest.raises(Exception, match="fmi3ExitInitializationMode"):
        slave.exitInitializationMode()
    assert log == [(3, "Invalid parameter m = 0.0 kg: valid range (0.0, inf)")]
    slave.freeInstance()


def test_the_fmi3_fmu_starts_at_the_experiments_start_time(fmu3_dir, tmp_path):
    """pythonfmu3 0.3.4's fmi3EnterInitializationMode drops startTime (it never calls the slave's
    setup_experiment); the status shim passes it (shim.CONTROL_VR): the FMU's time is the start
    time after initialization, and a system started at 1 s runs."""
    slave, vr, log = _face(fmu3_dir, tmp_path, "Mass", "mass", False)
    slave.instantiate(loggingOn=False)
    slave.setupExperiment(startTime=2.5, stopTime=3.5)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    try:
        assert slave.getReal([vr["time"]]) == [2.5]
    finally:
        slave.freeInstance()


def test_the_fmi2_calls_of_the_master_reach_the_fmi3_fmu(fmu3_dir, tmp_path):
    """EndStop as FMI 3.0 (Integer, Boolean and Real variables), allowed to return early: the
    values set through the bound fmi2 functions and through the FMU2Slave calls are read back by
    both, an fmi2Boolean (four bytes) through the one-byte fmi3Boolean; a refused set returns
    fmi2Error (3) with the FMU's message in the log; fmi2DoStep and doStep return early at the
    impact (x = 0.25 m reached at 1 m/s: t = 0.25 s) and keep (event, early, lastSuccessfulTime)."""
    from fmpy.fmi2 import fmi2Boolean, fmi2Integer, fmi2Real, fmi2ValueReference

    def array(kind, values):
        return (kind * len(values))(*values)

    slave, vr, log = _face(fmu3_dir, tmp_path, "EndStop", "stop", True)
    slave.instantiate(loggingOn=False)
    f, c = slave._functions, slave.component
    slave.setupExperiment(startTime=0.0, stopTime=3.5)
    slave.enterInitializationMode()
    ints = array(fmi2ValueReference, [vr["mode"], vr["kind"]])
    bools = array(fmi2ValueReference, [vr["friction"], vr["adv"]])
    assert f["fmi2SetInteger"](c, ints, 2, array(fmi2Integer, [1, 3])) == 0
    assert f["fmi2SetBoolean"](c, bools, 2, array(fmi2Boolean, [1, 0])) == 0
    got_ints, got_bools = (fmi2Integer * 2)(), (fmi2Boolean * 2)(7, 7)
    assert f["fmi2GetInteger"](c, ints, 2, got_ints) == 0
    assert f["fmi2GetBoolean"](c, bools, 2, got_bools) == 0
    assert (list(got_ints), list(got_bools)) == ([1, 3], [1, 0])
    assert (slave.getInteger([vr["mode"]]), slave.getBoolean([vr["friction"]])) == ([1], [True])
    slave.setBoolean([vr["friction"], vr["adv"]], [False, True])
    slave.setInteger([vr["kind"]], [2])
    assert slave.getBoolean([vr["friction"], vr["adv"]]) == [False, True]
    assert (
        f["fmi2SetBoolean"](c, array(fmi2ValueReference, [vr["adv"]]), 1, array(fmi2Boolean, [0]))
        == 0
    )
    assert f["fmi2GetBoolean"](c, bools, 2, got_bools) == 0 and list(got_bools) == [0, 0]
    assert f["fmi2GetInteger"](c, ints, 2, got_ints) == 0 and list(got_ints) == [1, 2]
    slave.setInteger([vr["kind"]], [3])
    reals = [vr[n] for n in ("ci", "l1", "l2", "m1", "ctr1.v")]
    assert (
        f["fmi2SetReal"](
            c, array(fmi2ValueReference, reals), 5, array(fmi2Real, [0.5, 0.25, 0.25, 1.0, 1.0])
        )
        == 0
    )
    assert slave.getReal(reals) == [0.5, 0.25, 0.25, 1.0, 1.0]
    slave.exitInitializationMode()
    assert log == []
    stop = array(fmi2ValueReference, [vr["stop"]])
    assert f["fmi2SetInteger"](c, stop, 1, array(fmi2Integer, [1])) == 3
    # the FMU names the FMI 3.0 function the face called
    assert log == [(3, "fmi3SetInt32 refused: stop is an output and cannot be set")]
    assert f["fmi2SetBoolean"](c, bools, 1, array(fmi2Boolean, [1])) == 3
    assert log[1] == (
        3,
        "fmi3SetBoolean refused: parameter friction is fixed after initialization (value False kept)",
    )
    assert slave.last_step == (False, False, None)
    assert f["fmi2DoStep"](c, 0.0, 0.5, 1) == 0
    assert slave.last_step[:2] == (False, True)
    assert slave.last_step[2] == pytest.approx(0.25, abs=1e-12)
    dx = (fmi2Real * 1)()
    assert f["fmi2GetReal"](c, array(fmi2ValueReference, [vr["dx"]]), 1, dx) == 0
    assert dx[0] == pytest.approx(0.25, abs=1e-12)
    slave.doStep(0.25, 0.5)  # to 0.75, after the impact: a full step
    assert slave.last_step == (False, False, 0.75)
    slave.doStep(0.75, 0.75)  # over the next impact at 1.25 s
    assert slave.last_step[:2] == (False, True)
    assert slave.last_step[2] == pytest.approx(1.25, abs=1e-12)
    slave.terminate()
    slave.freeInstance()
