"""The FMI contract of the slave classes, generic over the components, driven in-process
through their FMI methods without building an FMU: parameter validation, law outputs during
initialization, refused calls and inputs, non-finite outputs failing the step with the remedy
named, FMU state round trips and foreign states.

In-process, the FMU's C status shim (logged error -> fmi2Error) is not in play: a refused or
failed call is recognised by the error message it logs (pythonfmu's log_queue).
"""

import math

import pytest
from slave_driver import REL, Driver

from contactfmu.components.Damper.slave import Damper
from contactfmu.components.ElastoGap.slave import ElastoGap
from contactfmu.components.Mass.slave import Mass
from contactfmu.components.Sine.slave import Sine
from contactfmu.components.Spring.slave import Spring
from contactfmu.components.SpringDamper.slave import SpringDamper
from contactfmu.components.TranslationalHardstop.slave import TranslationalHardstop

# ---- parameter validation, refused calls ------------------------------------------------------


@pytest.mark.parametrize(
    "cls, params, name",
    [
        (Mass, {"m": 0.0}, "m"),
        (Mass, {"m": -1.0}, "m"),
        (Spring, {"c": -1.0}, "c"),
        (Damper, {"d": -0.5}, "d"),
        (SpringDamper, {"d": -2.0}, "d"),
        (ElastoGap, {"n": 0.5}, "n"),
        (ElastoGap, {"s_ref": 0.0}, "s_ref"),
        (ElastoGap, {"m_a": 1.0, "n": 1.5}, "n"),
        (TranslationalHardstop, {"b": -1.0}, "b"),
        (TranslationalHardstop, {"m_b": -1.0}, "m_b"),
        (Sine, {"f": -1.0}, "f"),
    ],
)
def test_invalid_parameter_fails_initialization(cls, params, name):
    d = Driver(cls, **params)
    errors = d.errors()
    assert len(errors) == 1 and f"Invalid parameter {name} = " in errors[0]
    assert not d.s._initialized
    assert d.step(0.0, 1e-3) is False and "doStep refused" in d.errors()[-1]


@pytest.mark.parametrize("cls", [ElastoGap, TranslationalHardstop])
def test_law_outputs_readable_during_initialization(cls):
    """Before initialization ends the outputs follow the inputs (the law, no coupling yet)."""
    s = cls(instance_name="x", resources="/tmp", visible=False, logger=None)
    d = Driver.__new__(Driver)
    d.s, d.vr, d.kind = (
        s,
        {v.name: v.vr for v in s.variable_table()},
        {v.name: v.type for v in s.variable_table()},
    )
    s.setup_experiment(0.0)
    s.enter_initialization_mode()
    d.set(c=100.0, d=0.0, m_b=1.0)
    if cls is TranslationalHardstop:
        d.set(b=0.0)
    d.inputs(flange_b__s=-0.5)
    assert d.get("flange_b.f") == pytest.approx(-50.0, rel=REL) and not d.errors()


def test_valid_boundary_parameters_pass():
    for cls, params in [
        (Spring, {"c": 0.0}),
        (ElastoGap, {"n": 1.0, "m_a": 1.0}),
        (Mass, {"m": 1e-9}),
    ]:
        d = Driver(cls, **params)
        assert not d.errors() and d.s._initialized


def test_nan_input_is_refused_and_previous_value_kept():
    d = Driver(Spring, c=2.0)
    d.inputs(flange_a__s=0.0, flange_b__s=1.0)
    assert d.get("f") == 2.0
    d.inputs(flange_a__s=0.5, flange_b__s=float("nan"))
    assert d.errors() and "refused" in d.errors()[-1]
    assert d.get("flange_a.s", "flange_b.s") == [0.0, 1.0] and d.get("f") == 2.0
    d.set(flange_b__s=float("inf"))
    assert len(d.errors()) == 2 and d.get("f") == 2.0
    assert d.step(0.0, 1e-3)  # the instance stays usable


def test_refused_calls_change_nothing():
    d = Driver(Mass, m=1.0)
    n = len(d.errors())
    d.set(m=5.0)  # parameter after initialization
    d.set(s=3.0)  # an output
    assert len(d.errors()) == n + 2 and d.get("m") == 1.0 and d.get("s") == 0.0
    assert d.step(0.5, 1e-3) is False  # not the FMU's time
    assert d.step(0.0, 0.0) is False  # step size not > 0
    assert d.step(0.0, float("nan")) is False
    assert len(d.errors()) == n + 5 and d.s.time == 0.0
    assert d.step(0.0, 1e-3)


def test_non_finite_output_fails_the_step():
    d = Driver(Mass, m=1e-300)
    d.inputs(flange_a__f=-1e300)
    assert d.step(0.0, 1.0) is False
    assert any("non-finite" in e or "cannot be computed" in e for e in d.errors())
    assert "Remedy: the force inputs are too large for the mass m = 1e-300 kg" in d.errors()[-1]
    assert d.step(1.0, 1.0) is False  # error state
    assert math.isfinite(d.get("s"))


# ---- FMU state --------------------------------------------------------------------------------


def _run(d, n, h, inputs):
    out = []
    for _ in range(n):
        t = d.s.time
        d.inputs(**inputs(t))
        out.append(d.get(*OUTS[type(d.s)]))
        assert d.step(t, h)
    return out


OUTS = {
    Mass: ("s", "v", "a", "flange_a.s"),
    ElastoGap: ("f", "f_c", "f_d", "lossPower"),
    TranslationalHardstop: ("F", "flange_a.f", "contact"),
}


@pytest.mark.parametrize(
    "cls, params, inputs",
    [
        (
            Mass,
            {"m": 2.0, "L": 0.2},
            lambda t: {"flange_a__f": math.sin(30 * t), "flange_b__f2": 0.5},
        ),
        (
            ElastoGap,
            {"c": 1e5, "d": 20.0, "m_b": 1.0},
            lambda t: {"flange_b__s": 0.02 - 2.0 * t, "flange_b__v": -2.0},
        ),
        (
            TranslationalHardstop,
            {"b": 0.02, "c": 1e6, "d": 100.0, "m_b": 1.0},
            lambda t: {"flange_b__s": -1.5 * t, "flange_b__v": -1.5},
        ),
    ],
)
def test_fmu_state_round_trip_continues_bit_identically(cls, params, inputs):
    h = 1e-3
    d = Driver(cls, **params)
    _run(d, 10, h, inputs)
    state, t = d.s._get_fmu_state(), d.s.time
    first = _run(d, 20, h, inputs) + [d.s.time]
    # into the same instance, through serialization
    d.s._set_fmu_state(cls._fmu_state_from_bytes(cls._fmu_state_to_bytes(state)))
    assert d.s.time == t
    assert _run(d, 20, h, inputs) + [d.s.time] == first
    # into a fresh instance initialized with other parameters
    other = Driver(cls)
    other.s._set_fmu_state(state)
    assert _run(other, 20, h, inputs) + [other.s.time] == first
    assert not d.errors() and not other.errors()


def test_foreign_state_is_refused():
    d = Driver(Mass, m=3.0)
    spring_state = Driver(Spring).s._get_fmu_state()
    d.s._set_fmu_state(spring_state)
    assert "fmi2SetFMUstate refused" in d.errors()[-1] and d.get("m") == 3.0
    bad = Mass._fmu_state_from_bytes(b"garbage")
    d.s._set_fmu_state(bad)
    assert len(d.errors()) == 2 and d.step(0.0, 1e-3)


@pytest.mark.parametrize(
    "cls, params, inputs, expected",
    [
        (
            Spring,
            {"c": 1e300},
            {"flange_b__s": 1e10},
            ["Remedy: a communication step well below sqrt(m/c)", "(c = 1e+300 N/m, d = 0 N.s/m)"],
        ),
        (
            Damper,
            {"d": 1e300},
            {"flange_b__v": 1e10},
            [
                "Remedy: a communication step below 2*m/d",
                "at h = 0.001 s only for m > h*d/2",
                "(c = 0 N/m, d = 1e+300 N.s/m)",
            ],
        ),
        (
            SpringDamper,
            {"c": 1e300, "d": 1e300},
            {"flange_b__s": 1e10},
            [
                "below 2*m/d",
                "at h = 0.001 s only for m > h*d/2",
                "well below sqrt(m/c)",
                "(c = 1e+300 N/m, d = 1e+300 N.s/m)",
            ],
        ),
        (
            ElastoGap,
            {"c": 1e300, "d": 2.0},
            {"flange_b__s": -1e10},
            [
                "Remedy: give m_a/m_b (the masses at the flanges; n = 1)",
                "(c = 1e+300 N/m, d = 2 N.s/m)",
                "at h = 0.001 s only for m > h*d/2",
            ],
        ),
        (
            ElastoGap,
            {"c": 1.0, "d": 2.0, "s_ref": 0.5, "f_ref": 1e300},
            {"flange_b__s": -1e10},
            ["(c = 2e+300 N/m, d = 2 N.s/m)"],
        ),
        (
            ElastoGap,
            {"c": 1e300, "d": 2.0, "n": 1.5},
            {"flange_b__s": -1e10},
            ["Remedy: a communication step below 2*m/d"],
        ),
        (
            TranslationalHardstop,
            {"c": 1e300, "d": 3.0, "b": 0.0},
            {"flange_b__s": 1e10},
            [
                "Remedy: give m_a/m_b (the masses at the flanges)",
                "(c = 1e+300 N/m, d = 3 N.s/m)",
                "at h = 0.001 s only for m > h*d/2",
            ],
        ),
    ],
)
def test_non_finite_force_names_the_remedy(cls, params, inputs, expected):
    """A force that comes out non-finite fails the getter with the element's remedy hint
    (sampled_law_remedy with its stiffness, damping and the last step size)."""
    d = Driver(cls, **params)
    assert d.step(0.0, 1e-3)
    d.inputs(**inputs)
    d.get("flange_b.f")
    message = d.errors()[-1]
    assert "non-finite output" in message
    for text in expected:
        assert text in message


def _slave_classes():
    import importlib

    from contactfmu.components import NAMES

    return [getattr(importlib.import_module(f"contactfmu.components.{n}.slave"), n) for n in NAMES]


@pytest.mark.parametrize("cls", _slave_classes(), ids=lambda c: c.__name__)
def test_a_state_restores_exactly_its_attributes_into_a_used_instance(cls):
    """A state saved right after instantiation lacks what initialization and the steps create
    (the derived parameters, MassWithStopAndFriction's internal mode and event log, ...); set into
    an initialized and stepped instance, the instance holds exactly the state's attributes again
    (those it created since are dropped), with the state's values, as the instantiated one did."""
    fresh = cls(instance_name="x", resources="/tmp", visible=False, logger=None)
    fresh.setup_experiment(0.0)
    state = fresh._get_fmu_state()
    used = Driver(cls)
    for t in (0.0, 1e-3, 2e-3):
        used.s.do_step(t, 1e-3)
    before = set(used.s.__dict__)
    used.s._set_fmu_state(state)
    after = {k: v for k, v in used.s.__dict__.items() if k not in used.s._infra}
    assert set(after) == set(state["values"]) and set(after) < before
    assert used.s._get_fmu_state() == state
    assert not used.errors()
