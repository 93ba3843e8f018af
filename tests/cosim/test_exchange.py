"""The batched exchange (cosim.coupling.Exchange on fastcalls.Program): the FMI calls of one exchange,
the merge rules of a Program, and results bit for bit those of the exchange made one value per call."""

import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

from contactfmu.cosim import CosimError, System, coupling
from contactfmu.cosim.coupling import Exchange
from contactfmu.cosim.fastcalls import Program
from contactfmu.cosim.implicit import implicit_coupling
from contactfmu.cosim.system import Plan, SignalLink


def driven(fmu_dir, c=1e5, d=20.0, m=1.0):
    """wall --rod 2 m-- spring -- mass m, a sine force on it and an ElastoGap (c, d) between the
    mass and a second wall that the spring presses it against (5 N) and the force lifts it off:
    bodies, compliant elements, a signal, contact changes, a stiff contact (coupled implicitly by
    the adaptive master where it is too stiff for the step)."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=m, L=0.0, s_start=2.9, v_start=0.0)
    s.add("sine", fmu_dir / "Sine.fmu", amplitude=20.0, f=3.0)
    s.add("force", fmu_dir / "Force.fmu")
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    s.connect("sine.y", "force.f")
    s.connect("force.flange", "mass.flange_b")
    s.add("stop", fmu_dir / "Fixed.fmu", s0=2.95)
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=c, d=d, s_rel0=0.0)
    s.connect("mass.flange_b", "gap.flange_a")
    s.connect("gap.flange_b", "stop.flange")
    return s


def _wrap_calls(system, wrap):
    """Replace every FMI function of the system's instances by wrap(instance name, function name,
    function), a call with the ctypes attributes fmpy's wrapper and the master's bindings read."""
    for inst in system.instances.values():
        functions = inst.slave._functions
        for name, function in list(functions.items()):
            call = wrap(inst.name, name, function)
            call.argnames = getattr(function, "argnames", None)
            call.argtypes, call.restype = function.argtypes, function.restype
            functions[name] = call


class Counts:
    """The FMI calls of the instances of a system, per (instance, FMI function)."""

    def __init__(self, system):
        self.calls = {}
        _wrap_calls(system, self._counting)

    def _counting(self, instance, name, function):
        def call(*args):
            self.calls[(instance, name)] = self.calls.get((instance, name), 0) + 1
            return function(*args)

        return call

    def of(self, name):
        """{instance: calls} of one FMI function."""
        return {i: n for (i, f), n in self.calls.items() if f == name}


@pytest.fixture
def bound(fmu_dir):
    """(system, plan, Counts) of the driven system in initialization mode, freed afterwards."""
    system = driven(fmu_dir)
    plan = system.plan()
    system.instantiate(0.0, 1.0)
    system.enter_initialization(0.0)
    try:
        yield system, plan, Counts(system)
    finally:
        system.free()


def test_jacobi_exchange_is_one_get_and_one_set_per_instance(bound):
    """libcosim's order reads every connected output, then sets every input: one fmi2GetReal per
    instance that gives a value (the mass's position, velocity and acceleration of both flanges
    in one), one fmi2SetReal per instance that takes one (the force's flange motion and its signal
    input in one)."""
    system, plan, counts = bound
    exchange = Exchange(plan)
    exchange.read(0.0)
    exchange.write(0.0)
    every = set(system.instances)
    assert counts.of("fmi2GetReal") == {name: 1 for name in every}
    assert counts.of("fmi2SetReal") == {name: 1 for name in every - {"sine"}}
    assert sum(counts.calls.values()) == 2 * len(every) - 1  # nothing else


def test_gauss_seidel_exchange_makes_one_call_per_instance_and_causal_stage(bound):
    """In causal order a body is read before its forces are set (s, v) and after (a, which depends
    on them), an element set before its force is read (s, v) and after (a, which its force
    derivative depends on): two gets per body, two sets per element, one set of the forces and
    one of their derivatives per body; the force's flange motion and its signal input are set in
    one call. The exchange made one value per call takes a call for every value."""
    system, plan, counts = bound
    Exchange(plan).gauss_seidel(0.0, 1e-3)
    assert counts.of("fmi2GetReal") == {
        "wall": 2,
        "stop": 2,
        "mass": 2,
        "spring": 1,
        "gap": 1,
        "force": 1,
        "sine": 1,
    }
    assert counts.of("fmi2SetReal") == {
        "wall": 1,
        "stop": 1,
        "mass": 1,
        "spring": 2,
        "gap": 2,
        "force": 2,
    }
    assert counts.of("fmi2GetRealOutputDerivatives") == {
        "spring": 1,
        "gap": 1,
        "force": 1,
        "sine": 1,
    }
    assert counts.of("fmi2SetRealInputDerivatives") == {"mass": 1, "force": 1}
    batched = sum(counts.calls.values())
    counts.calls.clear()
    Exchange(plan, batched=False).gauss_seidel(0.0, 1e-3)
    values = sum(counts.calls.values())
    # every link's values: motion (s, v and a to spring, gap and force), forces, signals
    assert counts.of("fmi2GetReal")["mass"] == 6  # s, v, a of two flanges
    assert (batched, values) == (25, 45)


def test_the_motion_exchange_sets_the_elements_motion_alone(fmu_dir):
    """Exchange.motion (part a. alone, for a measurement the adaptive master undoes): one get per
    body and one set per element, nothing else; every element's flange given the motion of its
    node (s + rod offset, v), read into light_at as the full exchange reads it into motion_at."""
    system = driven(fmu_dir)
    system.instances["mass"].values.update(v_start=0.3)
    _initialized(system)
    try:
        plan = system.plan()
        counts = Counts(system)
        exchange = Exchange(plan)
        exchange.motion(0.0)
        assert counts.of("fmi2GetReal") == {"wall": 1, "stop": 1, "mass": 1}
        assert counts.of("fmi2SetReal") == {"spring": 1, "gap": 1, "force": 1}
        assert sum(counts.calls.values()) == 6
        assert _get(system, "spring", "flange_a.s") == 2.0
        assert _get(system, "gap", "flange_a.s") == _get(system, "mass", "flange_b.s")
        assert _get(system, "force", "flange.v") == _get(system, "gap", "flange_a.v") == 0.3
        assert _get(system, "gap", "flange_b.s") == _get(system, "stop", "flange.s")
        exchange.gauss_seidel(0.0, 1e-3)
        assert exchange.light_at.keys() == exchange.motion_at.keys()
        assert all(
            _value(exchange.light_at[key]) == _value(exchange.motion_at[key])
            for key in exchange.motion_at
        )
        assert (
            _value(
                exchange.light_at[
                    ("mass", system.instances["mass"].var("flange_b.v").valueReference)
                ]
            )
            == 0.3
        )
    finally:
        system.free()


def _value(slot):
    buf, i = slot
    return buf[i]


def test_the_composite_exchange_reads_no_derivative_of_a_coupled_force(bound):
    """composite=True passes the coupled elements' forces through the coupling's correction, not
    their own derivatives: the exchange reads the derivatives of the other forces alone (the
    force's, the sine's), where the explicit exchange reads the gap's and the spring's too."""
    system, plan, counts = bound
    coupling_ = implicit_coupling(system, plan)
    assert {e.inst.name for e in coupling_.elements} == {"spring", "gap"}
    exchange = Exchange(plan, coupling_, composite=True)
    coupling_.stage = 1
    exchange.gauss_seidel(0.0, 1e-3)
    assert counts.of("fmi2GetRealOutputDerivatives") == {"force": 1, "sine": 1}
    counts.calls.clear()
    Exchange(plan).gauss_seidel(0.0, 1e-3)
    assert counts.of("fmi2GetRealOutputDerivatives") == {
        "spring": 1,
        "gap": 1,
        "force": 1,
        "sine": 1,
    }


def test_an_implicit_exchange_sets_accelerations_only_where_it_reads_the_force_derivative(bound):
    """An element's acceleration inputs are what its force derivative is of: the explicit exchange
    sets every element's (spring, force, gap); the composite one only the force's, whose
    derivative it reads (the coupled spring's and gap's are not passed); the backward Euler (lead)
    exchange, which passes no derivative, sets none."""
    system, plan, counts = bound
    accel = {(link.target.name, link.target_a) for link in plan.accel}
    assert {name for name, _ in accel} == {"spring", "force", "gap"}
    set_a = []

    def recording(instance, name, function):
        def call(*args):
            if name == "fmi2SetReal":
                vrs = {(instance, args[1][k]) for k in range(args[2])}
                set_a.extend(sorted(vrs & accel))
            return function(*args)

        return call

    _wrap_calls(system, recording)

    def accelerations_set(exchange):
        set_a.clear()
        counts.calls.clear()
        exchange.gauss_seidel(0.0, 1e-3)
        return {name for name, _ in set_a}

    assert accelerations_set(Exchange(plan)) == {"spring", "force", "gap"}
    coupling_ = implicit_coupling(system, plan)
    coupling_.stage = 1
    assert accelerations_set(Exchange(plan, coupling_, composite=True)) == {"force"}
    coupling_.stage = 0
    assert accelerations_set(Exchange(plan, implicit_coupling(system, plan), lead=True)) == set()


def test_observed_outputs_are_read_with_a_read_the_exchange_makes_anyway(bound):
    """Exchange(observe=): an output is read with the last read of its instance after which no
    input it depends on is set, no call of its own: the gap's s_rel (it depends on the positions)
    with its forces, before its acceleration is set; the mass's v (no inputs) with its
    acceleration. The gap's f declared to depend on every input (None) and the gap's input
    flange_a.s are left out (its acceleration is set after its last read). After the exchange the
    values there are those a get call reads."""
    system, plan, counts = bound
    gap, mass = system.instances["gap"], system.instances["mass"]
    vr = {
        (inst.name, name): inst.var(name).valueReference
        for inst, name in ((gap, "s_rel"), (gap, "f"), (mass, "v"))
    }
    position = {gap.var(n).valueReference for n in ("flange_a.s", "flange_b.s")}
    s_in = gap.var("flange_a.s").valueReference
    observe = [
        (gap, vr[("gap", "s_rel")], position),
        (mass, vr[("mass", "v")], set()),
        (gap, vr[("gap", "f")], None),
        (gap, s_in, None),
    ]
    plain = Exchange(plan)
    plain.gauss_seidel(0.0, 1e-3)
    calls = dict(counts.calls)
    counts.calls.clear()
    exchange = Exchange(plan, observe=observe)
    exchange.gauss_seidel(0.0, 1e-3)
    assert counts.calls == calls  # the same calls
    assert set(exchange.observed_at) == {("gap", vr[("gap", "s_rel")]), ("mass", vr[("mass", "v")])}
    for (name, ref), (buf, i) in exchange.observed_at.items():
        inst = system.instances[name]
        assert buf[i] == inst.call("get", lambda: inst.slave.getReal([ref]))[0]
    # the mass at 2.9 m against the gap's flange_b at 2.95 m: s_rel = 2.95 - 2.9
    (buf, i) = exchange.observed_at[("gap", vr[("gap", "s_rel")])]
    assert buf[i] == pytest.approx(0.05, abs=1e-12)


def test_the_composite_exchange_sets_a_body_s_forces_before_it_reads_its_acceleration(bound):
    """The composite exchange reads the mass's acceleration for the force element's derivative: the
    mass's present forces are set before (what that acceleration is of), then the coupling's."""
    system, plan, counts = bound
    mass = system.instances["mass"]
    (a,) = {link.a for link in plan.accel if link.source is mass and link.target.name == "force"}
    forces = {link.f for link in plan.forces if link.body is mass}
    log = []

    def logging(instance, name, function):
        def call(*args):
            if instance == "mass" and name in ("fmi2GetReal", "fmi2SetReal"):
                log.append((name, {args[1][k] for k in range(args[2])}))
            return function(*args)

        return call

    _wrap_calls(system, logging)
    coupling_ = implicit_coupling(system, plan)
    coupling_.stage = 1
    Exchange(plan, coupling_, composite=True).gauss_seidel(0.0, 1e-3)
    reads_a = [k for k, (name, vrs) in enumerate(log) if name == "fmi2GetReal" and a in vrs]
    sets_f = [k for k, (name, vrs) in enumerate(log) if name == "fmi2SetReal" and vrs & forces]
    assert len(reads_a) == 1 and len(sets_f) == 2  # the present forces, then the coupling's
    assert sets_f[0] < reads_a[0] < sets_f[1]


@pytest.mark.parametrize(
    "scheme, step, stiff",
    [
        ("adaptive", None, True),
        ("gauss-seidel", 1e-3, False),
        ("implicit", 1e-3, True),
        ("jacobi", 1e-4, False),
    ],
)
def test_batched_exchange_gives_the_results_of_one_call_per_value(
    fmu_dir, monkeypatch, scheme, step, stiff
):
    """Every value of every recorded output, and every step the adaptive master took, bit for bit
    (contact, sine force, implicit coupling of the stiff gap in the adaptive and implicit schemes)."""
    runs = []
    for batched in (True, False):
        monkeypatch.setattr(coupling, "BATCHED", batched)
        system = driven(fmu_dir, **(dict(c=1e7, d=250.0, m=0.01) if stiff else {}))
        runs.append(system.simulate(0.5, step, scheme=scheme))
    batched, reference = runs
    assert batched.names == reference.names
    assert batched.data.tobytes() == reference.data.tobytes()  # bit for bit, 0.0 and -0.0 apart
    assert np.isfinite([batched[name] for name in batched.names]).all()
    assert batched["gap.contact"].any()
    if scheme == "adaptive":
        assert repr(batched.steps) == repr(reference.steps)  # repr: exact, and nan is nan
        assert any(s.implicit for s in batched.steps)


# ---- the merge rules of a Program, on instances that log their calls --------------------------


class Logged:
    """An instance whose FMI get/set calls are logged; output vr 10 + k is twice input vr k."""

    def __init__(self, name, log):
        self.name, self.log, self.inputs = name, log, {}
        self.slave = SimpleNamespace(
            component=None, _functions={"fmi2GetReal": self._get, "fmi2SetReal": self._set}
        )

    def _get(self, component, vr, n, buf):
        self.log.append((self.name, "get", list(vr[:n])))
        for k in range(n):
            buf[k] = 2.0 * self.inputs.get(vr[k] - 10, 0.0)
        return 0

    def _set(self, component, vr, n, buf):
        self.log.append((self.name, "set", list(vr[:n])))
        for k in range(n):
            self.inputs[vr[k]] = buf[k]
        return 0


def _program(batched, log):
    """x.0 = 1; y.0 = x.10 (2); x.1 = y.10 (4); x.2 = y.10 + 0.5; a step of the master's own that
    doubles what y.10 read; x.3 = y.10 (8); z.0 = x.11 (8) and z.0 again = x.10 (2)."""
    x, y, z = Logged("x", log), Logged("y", log), Logged("z", log)
    one = [1.0]
    p = Program(batched)
    p.write(x, [0], [([(one, 0)], 0.0)])
    (x10,) = p.read(x, [10])
    p.write(y, [0], [([x10], 0.0)])
    (y10,) = p.read(y, [10])
    p.write(x, [1], [([y10], 0.0)])
    p.write(x, [2], [([y10], 0.5)])

    def double(t):
        y10.buf[y10.i] *= 2.0

    p.call(double)
    p.write(x, [3], [([y10], 0.0)])
    (x11,) = p.read(x, [11])
    p.write(z, [0], [([x11], 0.0)])
    p.write(z, [0], [([x10], 0.0)])
    return p.compile(), (x, y, z)


def test_program_merges_calls_where_the_order_allows_and_keeps_the_values():
    log, reference_log = [], []
    calls, (x, y, z) = _program(True, log)
    reference_calls, (rx, ry, rz) = _program(False, reference_log)
    for call in calls:
        call(0.0)
    for call in reference_calls:
        call(0.0)
    assert (x.inputs, y.inputs, z.inputs) == (rx.inputs, ry.inputs, rz.inputs)
    assert x.inputs == {0: 1.0, 1: 4.0, 2: 4.5, 3: 8.0} and z.inputs == {0: 2.0}
    assert log == [
        ("x", "set", [0]),  # made before x is read
        ("x", "get", [10]),
        ("y", "set", [0]),
        ("y", "get", [10]),
        ("x", "set", [1, 2]),  # held back and merged until the master's step
        ("x", "set", [3]),  # made before x is read again
        ("x", "get", [11]),
        ("z", "set", [0]),  # set twice before anything read it: once, to the last value
    ]
    assert len(reference_log) == 10


# ---- signals of every type, failures and warnings, the lead of the adaptive implicit exchange ----


class Table:
    """A stand-in instance whose values are a table {(kind, vr): value}: fmi2Get/Set of Real,
    Integer and Boolean read and write it."""

    def __init__(self, name, values=None):
        self.name, self.values = name, dict(values or {})
        functions = {}
        for kind in ("Real", "Integer", "Boolean"):
            functions[f"fmi2Get{kind}"] = self._get(kind)
            functions[f"fmi2Set{kind}"] = self._set(kind)
        self.slave = SimpleNamespace(component=None, _functions=functions)

    def _get(self, kind):
        def get(component, vr, n, buf):
            for k in range(n):
                buf[k] = self.values.get((kind, vr[k]), 0)
            return 0

        return get

    def _set(self, kind):
        def set_(component, vr, n, buf):
            for k in range(n):
                self.values[(kind, vr[k])] = buf[k]
            return 0

        return set_


@pytest.mark.parametrize("order", ["jacobi", "gauss-seidel"])
def test_signals_of_every_type_are_passed_as_they_are(order):
    """A Real, an Integer and a Boolean output connected to inputs (System.connect takes an output
    of any type): both exchange orders set each input to its output's value, of its own type
    (fmi2SetInteger of 7, not 7.0 or 8; fmi2SetBoolean of true; fmi2SetReal of 2.5, not 3.5)."""
    source = Table("x", {("Real", 1): 2.5, ("Integer", 2): 7, ("Boolean", 3): 1})
    target = Table("z")
    signals = [
        SignalLink(
            source,
            SimpleNamespace(type=kind, valueReference=vr),
            target,
            SimpleNamespace(type=kind, valueReference=10 + vr),
            False,
        )
        for kind, vr in (("Real", 1), ("Integer", 2), ("Boolean", 3))
    ]
    exchange = Exchange(Plan([], signals, [], []))
    if order == "jacobi":
        exchange.read(0.0)
        exchange.write(0.0)
    else:
        exchange.gauss_seidel(0.0, 1e-3)
    assert target.values == {("Real", 11): 2.5, ("Integer", 12): 7, ("Boolean", 13): 1}


class Failing:
    """Wraps every FMI function of a system's instances: the call numbered ``at`` (counted over
    all of them, from 1) returns ``status`` without reaching the FMU and is recorded as
    (instance, function); with warn=True every call that succeeds returns fmi2Warning instead."""

    def __init__(self, system, warn=False):
        self.at, self.status, self.count, self.failed, self.warn = None, 2, 0, None, warn
        _wrap_calls(system, self._wrapped)

    def _wrapped(self, instance, name, function):
        def call(*args):
            self.count += 1
            if self.count == self.at:
                self.failed = (instance, name)
                return self.status
            status = function(*args)
            return 1 if self.warn and status == 0 else status

        return call


def _initialized(system):
    system.instantiate(0.0, 1.0)
    system.enter_initialization(0.0)
    return system


def test_a_failed_call_of_the_exchange_names_the_instance_the_call_and_the_time(fmu_dir):
    """docs/master.md: an FMU error raises CosimError naming the instance, the FMI call and the
    time. Every call of the implicit exchange (the stiff gap's ElastoGap coupled implicitly: its
    law evaluated at the predicted end state, fmi2SetReal of its motion and fmi2GetReal of f, K,
    D), of both Jacobi halves and of the motion exchange alone is made to fail in turn with
    fmi2Discard, the least status worse than fmi2Warning (fastcalls.check)."""
    system = _initialized(driven(fmu_dir))
    try:
        plan = system.plan()
        failing = Failing(system)
        coupled = Exchange(plan, implicit_coupling(system, plan))
        jacobi = Exchange(plan)
        steps = [
            lambda: coupled.gauss_seidel(0.25, 1e-3),
            lambda: jacobi.read(0.5),
            lambda: jacobi.write(0.75),
            lambda: jacobi.motion(0.125),
        ]
        for step, t in zip(steps, (0.25, 0.5, 0.75, 0.125)):
            step()  # the inputs as the exchange sets them
            failing.count = 0
            step()  # again: the same calls, counted
            total = failing.count
            assert total >= 6
            for at in range(1, total + 1):
                failing.at, failing.count = at, 0
                with pytest.raises(CosimError) as e:
                    step()
                instance, function = failing.failed
                file = os.path.basename(system.instances[instance].path)
                assert str(e.value).startswith(
                    f"{instance} ({file}): {function} failed at t = {t:g} s: "
                    f"{function} failed with status 2 (discard)\n"
                )
                failing.at = None
                step()  # the inputs set again
    finally:
        system.free()


def test_warnings_are_not_errors(fmu_dir):
    """fastcalls.check: only a status worse than fmi2Warning raises. Every call of the implicit
    exchange returning fmi2Warning (the ElastoGap's probe included): it sets the same values."""
    results = []
    for warn in (False, True):
        system = _initialized(driven(fmu_dir))
        try:
            plan = system.plan()
            Failing(system, warn=warn)
            exchange = Exchange(plan, implicit_coupling(system, plan))
            exchange.gauss_seidel(0.0, 1e-3)
            mass = system.instances["mass"]
            vrs = [mass.var(n).valueReference for n in ("flange_a.f", "flange_b.f")]
            results.append(mass.slave.getReal(vrs))
        finally:
            system.free()
    assert results[0] == results[1]


def test_the_lead_exchange_sets_signals_to_their_value_at_the_step_end(fmu_dir):
    """Exchange(lead=True), the adaptive master's backward Euler exchange: a signal with a first
    derivative is set to x + h*dx/dt. The sine (amplitude 20, 3 Hz, phase 0.5 rad) at t = 0:
    20*sin(0.5) + h*20*6*pi*cos(0.5), the Force's input (its flange force is -f, MSL)."""
    system = driven(fmu_dir)
    system.instances["sine"].values.update(phase=0.5)
    plan = system.plan()
    _initialized(system)
    try:
        force = system.instances["force"]
        vr = force.var("flange.f").valueReference
        for h in (1e-3, 0.25):
            exchange = Exchange(plan, implicit_coupling(system, plan), lead=True)
            exchange.gauss_seidel(0.0, h)
            expected = 20.0 * math.sin(0.5) + h * 20.0 * 6.0 * math.pi * math.cos(0.5)
            assert -force.slave.getReal([vr])[0] == pytest.approx(expected, rel=1e-14)
    finally:
        system.free()


def test_newton_stops_when_the_end_state_agrees_with_the_linear_model(bound):
    """ImplicitCoupling docstring: the nonlinear element is evaluated at the predicted end state
    until its forces agree with the linear model; a piecewise linear law whose region the first
    prediction has right agrees exactly. The driven system's gap (ElastoGap, open 5 cm, the spring
    linear and before it) stays open over 1 ms: one evaluation of the gap, none of the spring."""
    system, plan, counts = bound
    exchange = Exchange(plan, implicit_coupling(system, plan))
    coupling = exchange.implicit
    probed = []
    for i, row in enumerate(coupling.rows):
        if row.probe is not None:
            set_real = row.probe.set_real

            def counting(*args, set_real=set_real, name=row.probe.inst.name):
                probed.append(name)
                return set_real(*args)

            coupling.rows[i] = row._replace(probe=row.probe._replace(set_real=counting))
    exchange.gauss_seidel(0.0, 1e-3)
    assert probed == ["gap"]


# ---- what the elements are given: the motion of their nodes ------------------------------------


def _get(system, instance, name):
    inst = system.instances[instance]
    return inst.slave.getReal([inst.var(name).valueReference])[0]


@pytest.mark.parametrize(
    "implicit, composite",
    [(False, False), (True, False), (True, True)],
    ids=["explicit", "implicit", "composite"],
)
def test_every_element_is_given_the_motion_of_its_node(fmu_dir, implicit, composite):
    """System docstring, Exchange: the Gauss-Seidel exchange sets each element's flange to the
    motion of the body on its node, s + rod offset, v, and a read after the body's forces are set
    (what the body outputs once the exchange is done); with the implicit coupling, whose Newton
    iteration sets the gap's motion to predicted end states, the exchange sets the present
    motion back (ImplicitCoupling.restores), in the plain and the composite exchange (whose
    coupling comes after the force derivatives are read). The driven system with the mass moving (0.3 m/s):
    the spring's flange_a at the wall plus the 2 m rod, the mass's motion at the spring, the gap
    and the force, the stop's at the gap's flange_b."""
    system = driven(fmu_dir)
    system.instances["mass"].values.update(v_start=0.3)
    _initialized(system)
    try:
        plan = system.plan()
        exchange = Exchange(
            plan, implicit_coupling(system, plan) if implicit else None, composite=composite
        )
        assert exchange.composite == composite
        exchange.gauss_seidel(0.0, 1e-3)
        if implicit:
            assert [r.probe is not None for r in exchange.implicit.rows] == [False, True]
        assert _get(system, "mass", "flange_b.v") == 0.3
        ends = {
            "spring": ("wall.flange", 2.0, "mass.flange_a", 0.0),
            "gap": ("mass.flange_b", 0.0, "stop.flange", 0.0),
        }
        for element, (node_a, rod_a, node_b, rod_b) in ends.items():
            for flange, node, rod in (("flange_a", node_a, rod_a), ("flange_b", node_b, rod_b)):
                body, port = node.split(".")
                s, v = (_get(system, body, f"{port}.{x}") for x in ("s", "v"))
                assert _get(system, element, f"{flange}.s") == s + rod
                assert _get(system, element, f"{flange}.v") == v
                if body == "mass" and not composite:
                    # (the composite exchange sets an element's accelerations where it passes
                    # that element's force derivative on)
                    assert _get(system, element, f"{flange}.a") == _get(system, body, f"{port}.a")
        assert _get(system, "force", "flange.s") == _get(system, "mass", "flange_b.s")
        assert _get(system, "force", "flange.v") == 0.3
        if not composite:
            assert _get(system, "force", "flange.a") == _get(system, "mass", "flange_b.a")
        assert _get(system, "spring", "flange_a.s") == 2.0
    finally:
        system.free()


# ---- Newton's stopping rule on a contact (ImplicitCoupling docstring) ----------------------------


def _plate(fmu_dir, s0, v0):
    """test_implicit.plate: a 10 g plate (ElastoGap c = 1e6 N/m, d = 250 N.s/m on the wall, 65 N
    pressing the plate onto it) at s0, v0, in initialization mode; (system, exchange with the
    implicit coupling, the list each evaluation of the gap at a predicted state appends to)."""
    system = System()
    system.add("wall", fmu_dir / "Fixed.fmu")
    system.add("contact", fmu_dir / "ElastoGap.fmu", c=1e6, d=250.0, s_rel0=0.0)
    system.add("plate", fmu_dir / "Mass.fmu", m=0.01, s_start=s0, v_start=v0)
    system.add("push", fmu_dir / "Force.fmu", f=-65.0)
    system.connect("wall.flange", "contact.flange_a")
    system.connect("contact.flange_b", "plate.flange_a")
    system.connect("push.flange", "plate.flange_b")
    _initialized(system)
    plan = system.plan()
    exchange = Exchange(plan, implicit_coupling(system, plan))
    coupling, probed = exchange.implicit, []
    ((i, row),) = [(i, r) for i, r in enumerate(coupling.rows) if r.probe is not None]

    def counting(*args, set_real=row.probe.set_real):
        probed.append(row.probe.inst.name)
        return set_real(*args)

    coupling.rows[i] = row._replace(probe=row.probe._replace(set_real=counting))
    return system, exchange, probed


@pytest.mark.parametrize("s0", [-50e-6, -80e-6], ids=["pressed-in", "pushed-out"])
def test_newton_stops_at_once_when_the_contact_keeps_its_linear_region(fmu_dir, s0):
    """The plate at rest in the contact, 50 um deep (the force 50 N < 65 N: pressed in) or 80 um
    (pushed out), over 1 ms: the ElastoGap stays in its linear region (f = k*x + d*w, K = k,
    D = d), where the linear model is the law itself: the first evaluation at the predicted end
    state agrees, and Newton stops (ImplicitCoupling docstring). The force is backward Euler's:
    m*y = -65 - f, f = k*x + d*w at x = s0 + h^2/2*y, w = h*y; its flange_b.f is the plate's input."""
    k, d, m, h = 1e6, 250.0, 0.01, 1e-3
    system, exchange, probed = _plate(fmu_dir, s0, 0.0)
    try:
        exchange.gauss_seidel(0.0, h)
        y = (-65.0 - k * s0) / (m + k * h * h / 2 + d * h)
        f = k * (s0 + h * h / 2 * y) + d * h * y
        assert _get(system, "plate", "flange_a.f") == pytest.approx(f, rel=1e-13)
        assert probed == ["contact"]
    finally:
        system.free()


def test_newton_goes_on_while_the_forces_disagree_even_with_the_same_c(fmu_dir):
    """The plate 0.1 um in the contact approaching fast (-0.44 mm/s: d*w < k*x, the damper force
    bounded, f = 2*k*x, K = 2k, D = 0) over h = 2*d/k = 0.5 ms, where the linear model's
    c = h^2/2*K + h*D is the same, 0.25 kg, for this region as for the linear one (K = k, D = d):
    the prediction from the present region ends in the linear region (f = k*x + d*w), with a force
    0.21 N off the model. Newton goes on until the end-state force agrees with the model
    (ImplicitCoupling docstring: RTOL), and the plate is given backward Euler's force in the
    linear region: m*y = -65 - f, f = k*x + d*w at x = x0 + h*v0 + h^2/2*y, w = v0 + h*y."""
    k, d, m, h = 1e6, 250.0, 0.01, 5e-4
    x0, v0 = -1e-7, -4.4e-4
    assert d * v0 < k * x0  # the damper force bounded at the start
    system, exchange, probed = _plate(fmu_dir, x0, v0)
    try:
        exchange.gauss_seidel(0.0, h)
        y = (-65.0 - k * (x0 + h * v0) - d * v0) / (m + k * h * h / 2 + d * h)
        x, w = x0 + h * v0 + h * h / 2 * y, v0 + h * y
        assert k * x <= d * w <= -k * x  # in the linear region at the end
        assert _get(system, "plate", "flange_a.f") == pytest.approx(k * x + d * w, rel=1e-13)
        assert probed == ["contact", "contact"]
    finally:
        system.free()
