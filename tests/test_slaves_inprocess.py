"""The slave classes driven in-process through their FMI methods, without building an FMU.

Fast (the whole file well under 10 s): these are the tests `python mutation/run.py --slaves` runs
against the mutants of src/contactfmu/fmus/ (inside a built FMU the package is renamed, so mutmut
cannot select a mutant there). Expected values are written here from the documented laws (each
slave's description, the component documentation), not taken from the physics modules.

In-process, the FMU's C status shim (logged error -> fmi2Error) is not in play: a refused or
failed call is recognised by the error message it logs (pythonfmu's log_queue).
"""
import math

import pytest
from pythonfmu.enums import Fmi2Status

from contactfmu.fmi.shim import DERIVATIVE_VR
from contactfmu.components.Damper.slave import Damper
from contactfmu.components.ElastoGap.slave import ElastoGap
from contactfmu.components.Fixed.slave import Fixed
from contactfmu.components.Force.slave import Force
from contactfmu.components.Mass.slave import Mass
from contactfmu.components.Sine.slave import Sine
from contactfmu.components.Spring.slave import Spring
from contactfmu.components.SpringDamper.slave import SpringDamper
from contactfmu.components.TranslationalHardstop.slave import TranslationalHardstop

REL = 1e-12


class Driver:
    """One slave instance driven through its FMI methods by variable name."""

    def __init__(self, cls, **params):
        self.s = cls(instance_name="x", resources="/tmp", visible=False, logger=None)
        self.vr = {v.name: v.vr for v in self.s.variable_table()}
        self.kind = {v.name: v.type for v in self.s.variable_table()}
        self.s.setup_experiment(0.0)
        self.s.enter_initialization_mode()
        self.set(**params)
        self.s.exit_initialization_mode()

    def set(self, **values):
        for name, value in values.items():
            name = name.replace("__", ".")
            kind = self.kind[name]
            {"Real": self.s.set_real, "Integer": self.s.set_integer,
             "Boolean": self.s.set_boolean}[kind]([self.vr[name]], [value])

    def inputs(self, **values):
        """All values in one fmi2SetReal call."""
        names = [n.replace("__", ".") for n in values]
        self.s.set_real([self.vr[n] for n in names], list(values.values()))

    def get(self, *names):
        out = []
        for name in names:
            kind = self.kind[name]
            out.append({"Real": self.s.get_real, "Integer": self.s.get_integer,
                        "Boolean": self.s.get_boolean}[kind]([self.vr[name]])[0])
        return out if len(out) > 1 else out[0]

    def der(self, name):
        return self.s.get_real([self.vr[name] + DERIVATIVE_VR])[0]

    def set_der(self, name, value):
        self.s.set_real([self.vr[name] + DERIVATIVE_VR], [value])

    def errors(self):
        return [m.msg for m in self.s.log_queue if m.status == Fmi2Status.error]

    def step(self, t, h):
        return self.s.do_step(t, h)


def compliant_signs(d, f, name="f"):
    """MSL PartialCompliant: flange_b.f = f = -flange_a.f."""
    fa, fb, ff = d.get("flange_a.f", "flange_b.f", name)
    assert ff == pytest.approx(f, rel=REL, abs=1e-15)
    assert fb == ff and fa == -ff


# ---- compliant elements: the law at the inputs -------------------------------------------------

@pytest.mark.parametrize("sa, sb, va, vb", [(0.1, 0.5, 0.0, 0.0), (0.3, -0.2, 1.0, -2.0), (-1.0, -1.0, 0.5, 0.5)])
def test_spring_law_sign_and_derivative(sa, sb, va, vb):
    c, s0 = 40.0, 0.25
    d = Driver(Spring, c=c, s_rel0=s0)
    d.inputs(flange_a__s=sa, flange_b__s=sb, flange_a__v=va, flange_b__v=vb)
    compliant_signs(d, c * ((sb - sa) - s0))
    assert d.get("s_rel") == pytest.approx(sb - sa, rel=REL)
    assert d.der("f") == pytest.approx(c * (vb - va), rel=REL, abs=1e-15)
    assert d.der("flange_b.f") == d.der("f") and d.der("flange_a.f") == -d.der("f")
    assert d.get("interface.c", "interface.d") == [c, 0.0]
    assert not d.errors()


def test_spring_tension_pulls_flanges_together():
    d = Driver(Spring, c=10.0)
    d.inputs(flange_a__s=0.0, flange_b__s=0.1)
    assert d.get("f") > 0.0 and d.get("flange_a.f") < 0.0


@pytest.mark.parametrize("va, vb, aa, ab", [(0.0, 2.0, 0.0, 1.0), (1.5, -0.5, 3.0, -1.0)])
def test_damper_law_loss_power_and_derivative(va, vb, aa, ab):
    dd = 3.5
    d = Driver(Damper, d=dd)
    d.inputs(flange_a__s=0.2, flange_b__s=0.7, flange_a__v=va, flange_b__v=vb, flange_a__a=aa, flange_b__a=ab)
    compliant_signs(d, dd * (vb - va))
    assert d.get("v_rel") == pytest.approx(vb - va, rel=REL)
    assert d.get("s_rel") == pytest.approx(0.5, rel=REL)
    assert d.get("lossPower") == pytest.approx(dd * (vb - va) ** 2, rel=REL)
    assert d.get("lossPower") >= 0.0
    assert d.der("f") == pytest.approx(dd * (ab - aa), rel=REL)
    assert d.get("interface.c", "interface.d") == [0.0, dd]


def test_spring_damper_law_loss_power_and_derivative():
    c, dd, s0 = 20.0, 2.0, 0.1
    d = Driver(SpringDamper, c=c, d=dd, s_rel0=s0)
    sa, sb, va, vb, aa, ab = 0.3, 0.6, -1.0, 0.5, 0.5, 2.5
    d.inputs(flange_a__s=sa, flange_b__s=sb, flange_a__v=va, flange_b__v=vb, flange_a__a=aa, flange_b__a=ab)
    compliant_signs(d, c * (sb - sa - s0) + dd * (vb - va))
    assert d.get("s_rel") == pytest.approx(sb - sa, rel=REL)
    assert d.get("v_rel") == pytest.approx(vb - va, rel=REL)
    assert d.get("lossPower") == pytest.approx(dd * (vb - va) ** 2, rel=REL)
    assert d.der("f") == pytest.approx(c * (vb - va) + dd * (ab - aa), rel=REL)
    assert d.get("interface.c", "interface.d") == [c, dd]


def _elastogap(s_rel, v_rel, c, dd, s0, n, s_ref, f_ref):
    """MSL 4.1 ElastoGap, written from the documentation: (f, f_c, f_d, contact)."""
    if s_rel >= s0:
        return 0.0, 0.0, 0.0, False
    fr = f_ref if f_ref > 0.0 else c * s_ref
    f_c = -fr * abs((s_rel - s0) / s_ref) ** n
    f_d = dd * v_rel
    f_d = max(f_c, min(-f_c, f_d))
    return f_c + f_d, f_c, f_d, True


@pytest.mark.parametrize("s_rel, v_rel, n, s_ref, f_ref", [
    (-0.02, -0.5, 1.0, 1.0, 0.0),    # contact, approaching, damper bounded to f_c
    (-0.02, -0.01, 1.0, 1.0, 0.0),   # contact, damper unbounded
    (-0.02, 0.01, 1.0, 1.0, 0.0),    # contact, separating slowly
    (-0.02, 3.0, 1.0, 1.0, 0.0),     # contact, fast separation: f = 0
    (-0.02, -0.01, 1.5, 0.1, 0.0),   # Hertzian exponent, reference compression
    (-0.02, -0.01, 1.5, 0.1, 7.0),   # explicit f_ref
    (-0.02, -0.001, 1.0, 1.0, 0.5),  # explicit f_ref below 1 N
    (0.03, -1.0, 1.0, 1.0, 0.0),     # no contact
    (0.01, 1.0, 1.5, 1.0, 0.0),      # s_rel = s_rel0: no contact
])
def test_elastogap_law(s_rel, v_rel, n, s_ref, f_ref):
    c, dd, s0 = 1000.0, 20.0, 0.01
    d = Driver(ElastoGap, c=c, d=dd, s_rel0=s0, n=n, s_ref=s_ref, f_ref=f_ref, useHeatPort=True)
    sa, va = 0.5, 0.25
    d.inputs(flange_a__s=sa, flange_b__s=sa + s_rel, flange_a__v=va, flange_b__v=va + v_rel)
    f, f_c, f_d, contact = _elastogap(s_rel, v_rel, c, dd, s0, n, s_ref, f_ref)
    compliant_signs(d, f)
    assert d.get("f_c") == pytest.approx(f_c, rel=REL)
    assert d.get("f_d") == pytest.approx(f_d, rel=REL)
    assert d.get("contact") is contact
    assert d.get("f") <= 0.0
    assert d.get("lossPower") == pytest.approx(f_d * v_rel, rel=REL)
    assert d.get("heatPort.Q_flow") == pytest.approx(-f_d * v_rel, rel=REL)
    assert d.get("s_rel") == pytest.approx(s_rel, rel=1e-9)
    assert d.get("v_rel") == pytest.approx(v_rel, rel=1e-9)
    assert not d.errors()


@pytest.mark.parametrize("v_rel", [-0.01, -5.0, 5.0])
def test_elastogap_derivative_and_interface_with_exponent_and_reference(v_rel):
    """n = 1.5, s_ref = 0.1 m, f_ref = 7 N: f_c = -f_ref*(delta/s_ref)^n, delta = s_rel0 - s_rel;
    df_c/dt = n*f_ref/s_ref*(delta/s_ref)^(n-1)*v_rel. Unbounded damper: df/dt = df_c/dt + d*a_rel,
    df/ds_rel = n*f_ref/s_ref*(delta/s_ref)^(n-1), df/dv_rel = d; bounded to f_c (fast approach):
    f = 2*f_c; bounded to -f_c (fast separation): f = 0."""
    c, dd, s0, n, s_ref, f_ref = 1000.0, 20.0, 0.01, 1.5, 0.1, 7.0
    d = Driver(ElastoGap, c=c, d=dd, s_rel0=s0, n=n, s_ref=s_ref, f_ref=f_ref)
    s_rel, a_rel = -0.03, 2.0
    d.inputs(flange_a__s=0.0, flange_b__s=s_rel, flange_a__v=0.0, flange_b__v=v_rel, flange_b__a=a_rel)
    delta = s0 - s_rel
    k = n * f_ref / s_ref * (delta / s_ref) ** (n - 1.0)
    f_c = -f_ref * (delta / s_ref) ** n
    if abs(dd * v_rel) < -f_c:
        rate, dfds, dfdv = k * v_rel + dd * a_rel, k, dd
    elif dd * v_rel < 0.0:
        rate, dfds, dfdv = 2.0 * k * v_rel, 2.0 * k, 0.0
    else:
        rate, dfds, dfdv = 0.0, 0.0, 0.0
    assert d.der("f") == pytest.approx(rate, rel=1e-12, abs=1e-12)
    assert d.get("interface.c") == pytest.approx(dfds, rel=1e-12, abs=1e-12)
    assert d.get("interface.d") == pytest.approx(dfdv, rel=1e-12, abs=1e-12)


def test_elastogap_heat_port_off_and_derivative():
    c, dd = 1000.0, 20.0
    d = Driver(ElastoGap, c=c, d=dd)
    d.inputs(flange_a__s=0.0, flange_b__s=-0.02, flange_a__v=0.0, flange_b__v=-0.01,
             flange_a__a=1.0, flange_b__a=-2.0)
    assert d.get("heatPort.Q_flow") == 0.0 and d.get("lossPower") > 0.0
    # unbounded damper, n = 1: df/dt = c*v_rel + d*a_rel
    assert d.der("f") == pytest.approx(c * -0.01 + dd * -3.0, rel=REL)
    assert d.der("flange_a.f") == -d.der("f")
    assert d.get("interface.c") == pytest.approx(c, rel=REL)
    assert d.get("interface.d") == pytest.approx(dd, rel=REL)
    d.inputs(flange_b__s=0.5)  # out of contact: nothing
    assert d.der("f") == 0.0 and d.get("interface.c", "interface.d") == [0.0, 0.0]


def _hardstop(s_rel, v_rel, b, c, dd):
    if b <= 2e-10:
        return c * s_rel + dd * v_rel, (s_rel > 0) - (s_rel < 0)
    if s_rel > b / 2:
        return c * (s_rel - b / 2) + dd * v_rel, 1
    if s_rel < -b / 2:
        return c * (s_rel + b / 2) + dd * v_rel, -1
    return 0.0, 0


@pytest.mark.parametrize("s_rel, v_rel, b", [(0.3, 0.5, 0.4), (0.3, -0.5, 0.4), (-0.3, 0.5, 0.4), (-0.3, -2.0, 0.4),
                                             (0.1, 1.0, 0.4), (-0.15, -1.0, 0.4), (0.05, -1.0, 0.0),
                                             (-0.05, 1.0, 1e-10)])
def test_hardstop_law(s_rel, v_rel, b):
    c, dd = 500.0, 7.0
    d = Driver(TranslationalHardstop, b=b, c=c, d=dd)
    sa, va = -0.1, 0.2
    d.inputs(flange_a__s=sa, flange_b__s=sa + s_rel, flange_a__v=va, flange_b__v=va + v_rel)
    F, contact = _hardstop(s_rel, v_rel, b, c, dd)
    compliant_signs(d, F, "F")
    assert d.get("contact") == contact
    assert d.get("s_rel") == pytest.approx(s_rel, rel=1e-9)
    assert d.get("v_rel") == pytest.approx(v_rel, rel=1e-9)
    assert not d.errors()


def test_hardstop_derivative_in_contact():
    c, dd = 500.0, 7.0
    d = Driver(TranslationalHardstop, b=0.4, c=c, d=dd)
    d.inputs(flange_a__s=0.0, flange_b__s=0.3, flange_a__v=0.0, flange_b__v=0.5, flange_a__a=1.0, flange_b__a=3.0)
    assert d.der("F") == pytest.approx(c * 0.5 + dd * 2.0, rel=REL)
    assert d.der("flange_a.f") == -d.der("F")
    assert d.get("interface.c", "interface.d") == [c, dd]
    d.inputs(flange_b__s=0.1)
    assert d.der("F") == 0.0


# ---- inertial and source elements ---------------------------------------------------------------

def test_mass_sign_convention_and_flanges():
    m, L = 2.0, 0.4
    d = Driver(Mass, m=m, L=L, s_start=1.0, v_start=-0.5)
    d.inputs(flange_a__f=3.0, flange_a__f2=1.0, flange_a__f3=-0.5, flange_a__f4=0.25,
             flange_b__f=-2.0, flange_b__f2=0.5, flange_b__f3=0.125, flange_b__f4=-1.0)
    fa, fb = 3.0 + 1.0 - 0.5 + 0.25, -2.0 + 0.5 + 0.125 - 1.0
    a = (-fa - fb) / m
    assert d.get("a") == pytest.approx(a, rel=REL)
    assert d.get("flange_a.a") == d.get("flange_b.a") == d.get("a")
    assert d.get("s", "v") == [1.0, -0.5]
    assert d.get("flange_a.s") == pytest.approx(1.0 - L / 2, rel=REL)
    assert d.get("flange_b.s") == pytest.approx(1.0 + L / 2, rel=REL)
    assert d.get("flange_a.v") == d.get("flange_b.v") == -0.5


def test_mass_outputs_during_initialization_follow_the_start_parameters():
    s = Mass(instance_name="x", resources="/tmp", visible=False, logger=None)
    d = Driver.__new__(Driver)
    d.s, d.vr, d.kind = s, {v.name: v.vr for v in s.variable_table()}, {v.name: v.type for v in s.variable_table()}
    s.setup_experiment(0.0)
    s.enter_initialization_mode()
    d.set(s_start=2.0, v_start=-3.0, L=1.0, m=2.0)
    d.inputs(flange_a__f=4.0)
    assert d.get("s", "v", "a", "flange_a.s", "flange_b.s") == [2.0, -3.0, -2.0, 1.5, 2.5]
    d.set(s_start=5.0)
    assert d.get("s") == 5.0
    s.exit_initialization_mode()
    assert d.get("s", "v") == [5.0, -3.0] and not d.errors()


def test_mass_exact_motion_under_held_force():
    m, s0, v0, F, h = 4.0, 0.5, 1.25, 3.0, 0.01
    d = Driver(Mass, m=m, s_start=s0, v_start=v0, L=1.0)
    d.inputs(flange_b__f=F)   # the body receives -F
    a = -F / m
    for k in range(50):
        assert d.step(k * h, h)
    t = 50 * h
    assert d.get("s") == pytest.approx(s0 + v0 * t + 0.5 * a * t * t, rel=1e-12)
    assert d.get("v") == pytest.approx(v0 + a * t, rel=1e-12)
    assert d.get("a") == pytest.approx(a, rel=REL)
    assert d.get("flange_b.s") - d.get("flange_a.s") == pytest.approx(1.0, rel=1e-12)
    assert not d.errors()


def test_mass_linear_force_from_input_derivatives():
    m, F, rate, h = 2.0, 1.0, -6.0, 0.1
    d = Driver(Mass, m=m)
    d.inputs(flange_a__f=F)
    d.set_der("flange_a.f", rate / 2)
    d.set_der("flange_a.f2", rate / 4)
    d.set_der("flange_b.f4", rate / 4)
    assert d.step(0.0, h)
    a, j = -F / m, -rate / m
    assert d.get("s") == pytest.approx(a * h * h / 2 + j * h ** 3 / 6, rel=1e-12)
    assert d.get("v") == pytest.approx(a * h + j * h * h / 2, rel=1e-12)
    # a new input value without a derivative is held
    d.inputs(flange_a__f=0.0, flange_a__f2=0.0, flange_b__f4=0.0)
    s, v = d.get("s", "v")
    assert d.step(h, h)
    assert d.get("s") == pytest.approx(s + v * h, rel=1e-12)
    assert d.get("v") == pytest.approx(v, rel=1e-12)


def test_fixed_force_sine():
    d = Driver(Fixed, s0=0.7)
    d.inputs(flange__f=1.0, flange__f2=2.0, flange__f3=-4.0, flange__f4=0.5)
    assert d.get("flange.s", "flange.v", "flange.a") == [0.7, 0.0, 0.0]
    assert d.get("f_support") == pytest.approx(0.5, rel=REL)
    assert d.step(0.0, 1e-3) and d.get("flange.s", "flange.v", "flange.a") == [0.7, 0.0, 0.0]
    assert not d.errors() and d.s._initialized
    d = Driver(Force)
    d.inputs(f=3.0, flange__v=2.0)
    d.set_der("f", 5.0)
    assert d.get("flange.f") == -3.0 and d.get("power") == 6.0 and d.der("flange.f") == -5.0
    assert not d.errors()
    amp, fr, ph, off, t0 = 2.0, 3.0, 0.4, 0.5, 0.1
    d = Driver(Sine, amplitude=amp, f=fr, phase=ph, offset=off, startTime=t0)
    assert d.get("y") == off
    for k in range(3):
        assert d.step(k * 0.05, 0.05)
    t = 0.15
    assert d.get("y") == pytest.approx(off + amp * math.sin(2 * math.pi * fr * (t - t0) + ph), rel=1e-12)
    assert d.der("y") == pytest.approx(amp * 2 * math.pi * fr * math.cos(2 * math.pi * fr * (t - t0) + ph),
                                       rel=1e-12)


# ---- parameter validation, refused calls ------------------------------------------------------

@pytest.mark.parametrize("cls, params, name", [
    (Mass, {"m": 0.0}, "m"), (Mass, {"m": -1.0}, "m"), (Spring, {"c": -1.0}, "c"), (Damper, {"d": -0.5}, "d"),
    (SpringDamper, {"d": -2.0}, "d"), (ElastoGap, {"n": 0.5}, "n"), (ElastoGap, {"s_ref": 0.0}, "s_ref"),
    (ElastoGap, {"m_a": 1.0, "n": 1.5}, "n"), (TranslationalHardstop, {"b": -1.0}, "b"),
    (TranslationalHardstop, {"m_b": -1.0}, "m_b"), (Sine, {"f": -1.0}, "f"),
])
def test_invalid_parameter_fails_initialization(cls, params, name):
    d = Driver(cls, **params)
    errors = d.errors()
    assert len(errors) == 1 and f"Invalid parameter {name} = " in errors[0]
    assert not d.s._initialized
    assert d.step(0.0, 1e-3) is False and "doStep refused" in d.errors()[-1]


def test_elastogap_coupling_needs_n_1_and_says_so():
    d = Driver(ElastoGap, m_a=1.0, n=1.5)
    assert "the inertia-aware coupling (m_a or m_b > 0) needs n = 1" in d.errors()[0]
    assert d.errors()[0] == ("Invalid parameter n = 1.5: the inertia-aware coupling (m_a or m_b > 0) needs n = 1 "
                             "(a piecewise linear law it solves in closed form); set m_a = m_b = 0 for n != 1")


@pytest.mark.parametrize("cls", [ElastoGap, TranslationalHardstop])
def test_law_outputs_readable_during_initialization(cls):
    """Before initialization ends the outputs follow the inputs (the law, no coupling yet)."""
    s = cls(instance_name="x", resources="/tmp", visible=False, logger=None)
    d = Driver.__new__(Driver)
    d.s, d.vr, d.kind = s, {v.name: v.vr for v in s.variable_table()}, {v.name: v.type for v in s.variable_table()}
    s.setup_experiment(0.0)
    s.enter_initialization_mode()
    d.set(c=100.0, d=0.0, m_b=1.0)
    if cls is TranslationalHardstop:
        d.set(b=0.0)
    d.inputs(flange_b__s=-0.5)
    assert d.get("flange_b.f") == pytest.approx(-50.0, rel=REL) and not d.errors()


def test_valid_boundary_parameters_pass():
    for cls, params in [(Spring, {"c": 0.0}), (ElastoGap, {"n": 1.0, "m_a": 1.0}), (Mass, {"m": 1e-9})]:
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
    d.set(m=5.0)           # parameter after initialization
    d.set(s=3.0)           # an output
    assert len(d.errors()) == n + 2 and d.get("m") == 1.0 and d.get("s") == 0.0
    assert d.step(0.5, 1e-3) is False        # not the FMU's time
    assert d.step(0.0, 0.0) is False         # step size not > 0
    assert d.step(0.0, float("nan")) is False
    assert len(d.errors()) == n + 5 and d.s.time == 0.0
    assert d.step(0.0, 1e-3)


def test_non_finite_output_fails_the_step():
    d = Driver(Mass, m=1e-300)
    d.inputs(flange_a__f=-1e300)
    assert d.step(0.0, 1.0) is False
    assert any("non-finite" in e or "cannot be computed" in e for e in d.errors())
    assert "Remedy: the force inputs are too large for the mass m = 1e-300 kg" in d.errors()[-1]
    assert d.step(1.0, 1.0) is False   # error state
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


OUTS = {Mass: ("s", "v", "a", "flange_a.s"), ElastoGap: ("f", "f_c", "f_d", "lossPower"),
        TranslationalHardstop: ("F", "flange_a.f", "contact")}


@pytest.mark.parametrize("cls, params, inputs", [
    (Mass, {"m": 2.0, "L": 0.2}, lambda t: {"flange_a__f": math.sin(30 * t), "flange_b__f2": 0.5}),
    (ElastoGap, {"c": 1e5, "d": 20.0, "m_b": 1.0},
     lambda t: {"flange_b__s": 0.02 - 2.0 * t, "flange_b__v": -2.0}),
    (TranslationalHardstop, {"b": 0.02, "c": 1e6, "d": 100.0, "m_b": 1.0},
     lambda t: {"flange_b__s": -1.5 * t, "flange_b__v": -1.5}),
])
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


@pytest.mark.parametrize("cls, params, inputs, expected", [
    (Spring, {"c": 1e300}, {"flange_b__s": 1e10},
     ["Remedy: a communication step well below sqrt(m/c)", "(c = 1e+300 N/m, d = 0 N.s/m)"]),
    (Damper, {"d": 1e300}, {"flange_b__v": 1e10},
     ["Remedy: a communication step below 2*m/d", "at h = 0.001 s only for m > h*d/2", "(c = 0 N/m, d = 1e+300 N.s/m)"]),
    (SpringDamper, {"c": 1e300, "d": 1e300}, {"flange_b__s": 1e10},
     ["below 2*m/d", "at h = 0.001 s only for m > h*d/2", "well below sqrt(m/c)",
      "(c = 1e+300 N/m, d = 1e+300 N.s/m)"]),
    (ElastoGap, {"c": 1e300, "d": 2.0}, {"flange_b__s": -1e10},
     ["Remedy: give m_a/m_b (the masses at the flanges; n = 1)", "(c = 1e+300 N/m, d = 2 N.s/m)",
      "at h = 0.001 s only for m > h*d/2"]),
    (ElastoGap, {"c": 1.0, "d": 2.0, "s_ref": 0.5, "f_ref": 1e300}, {"flange_b__s": -1e10},
     ["(c = 2e+300 N/m, d = 2 N.s/m)"]),
    (ElastoGap, {"c": 1e300, "d": 2.0, "n": 1.5}, {"flange_b__s": -1e10},
     ["Remedy: a communication step below 2*m/d"]),
    (TranslationalHardstop, {"c": 1e300, "d": 3.0, "b": 0.0}, {"flange_b__s": 1e10},
     ["Remedy: give m_a/m_b (the masses at the flanges)", "(c = 1e+300 N/m, d = 3 N.s/m)",
      "at h = 0.001 s only for m > h*d/2"]),
])
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


# ---- inertia-aware coupling (m_a/m_b set): documented impact results in a master loop ------------

d_end = [None]   # s - offset at the end of the last _bounce


def _bounce(cls, params, h, T, jacobi, offset=0.0):
    """A 1 kg Mass (v_start = 1 m/s, from s = 0) against a stop element whose other flange is fixed,
    in a Gauss-Seidel (set inputs, read outputs, step) or Jacobi (read, step, set) master loop.
    The stop is at s = offset + 0.01 (offset: the fixed flange's position, or ElastoGap's s_rel0).
    Returns (v at T, largest s - offset at a communication point, errors logged, the element's Driver)."""
    m = Driver(Mass, m=1.0, v_start=1.0, s_start=offset)
    gap = cls is ElastoGap   # ElastoGap: contact while flange_b.s - flange_a.s < s_rel0: the mass at flange_a
    e = Driver(cls, **({"m_a": 1.0} if gap else {"m_b": 1.0}), **params)
    mine, force, mass_input = ("flange_a", "flange_a.f", "flange_b__f") if gap else ("flange_b", "flange_b.f",
                                                                                       "flange_a__f")
    if gap:
        e.inputs(flange_b__s=2 * offset + 0.01)   # s_rel0 = offset: contact from s = offset + 0.01
    else:
        e.inputs(flange_a__s=offset)

    def feed():
        e.inputs(**{mine + "__s": m.get("s"), mine + "__v": m.get("v")})

    feed()   # the initial exchange of every master
    smax = -math.inf
    for _ in range(round(T / h)):
        t = m.s.time
        if not jacobi:
            feed()
        m.inputs(**{mass_input: e.get(force)})
        assert m.step(t, h) and e.step(t, h)
        if jacobi:
            feed()
        smax = max(smax, m.get("s") - offset)
    d_end[0] = m.get("s") - offset
    return m.get("v"), smax, m.errors() + e.errors(), e


@pytest.mark.parametrize("h", [1e-3, 5e-3])
@pytest.mark.parametrize("jacobi", [False, True])
def test_hardstop_coupling_gives_the_laws_rebound(h, jacobi):
    """Upper stop at b/2 = 0.01 m, c = 1e4 N/m, d = 20 N.s/m, 1 kg: inside the stop the law is the
    linear oscillator x'' = -(c*x + d*x')/m (the damper unbounded), so the mass leaves the stop
    at t = pi/wd with v = -v0*exp(-zeta*wn*pi/wd), and x never exceeds its first maximum."""
    c, dd, m, v0 = 1e4, 20.0, 1.0, 1.0
    wn, zeta = math.sqrt(c / m), dd / (2.0 * math.sqrt(c * m))
    wd, a = wn * math.sqrt(1.0 - zeta ** 2), zeta * wn
    t_max = math.atan2(wd, a) / wd
    x_max = v0 / wd * math.exp(-a * t_max) * math.sin(wd * t_max)
    v, smax, errors, e = _bounce(TranslationalHardstop, {"b": 0.02, "c": c, "d": dd}, h, 0.06, jacobi, 0.3)
    assert v == pytest.approx(-v0 * math.exp(-a * math.pi / wd), rel=1e-9)
    # contact from t = 0.01 s for pi/wd; the coupling may spread the impact over the steps around it
    assert d_end[0] == pytest.approx(0.01 + v * (0.06 - 0.01 - math.pi / wd), abs=3e-4)
    assert 0.01 < smax <= 0.01 + x_max * (1.0 + 1e-9)
    assert not errors
    assert e.der("F") == 0.0 and e.get("interface.c", "interface.d") == [0.0, 0.0]


@pytest.mark.parametrize("h", [1e-3, 5e-3])
@pytest.mark.parametrize("jacobi", [False, True])
def test_elastogap_coupling_gives_the_laws_rebound(h, jacobi):
    """ElastoGap without damping (d = 0, n = 1), c = 1e4 N/m, 1 kg at 1 m/s: an elastic impact,
    the mass leaves at -1 m/s and compresses the spring by at most v0*sqrt(m/c) = 0.01 m."""
    v, smax, errors, e = _bounce(ElastoGap, {"c": 1e4, "d": 0.0, "s_rel0": 0.3}, h, 0.06, jacobi, 0.3)
    assert v == pytest.approx(-1.0, rel=1e-9)
    assert 0.01 < smax <= 0.02 * (1.0 + 1e-9)
    assert d_end[0] == pytest.approx(0.01 - (0.06 - 0.01 - math.pi / 100.0), abs=3e-4)   # contact time pi/wn
    assert not errors
    assert e.der("f") == 0.0 and e.get("interface.c", "interface.d") == [0.0, 0.0]


def test_elastogap_coupling_with_reference_compression():
    """The coupling plans with the law's stiffness f_ref/s_ref (here f_ref = 2e4 N at s_ref = 2 m,
    so 1e4 N/m, c not used): the same elastic rebound."""
    v, smax, errors, _ = _bounce(ElastoGap, {"c": 5.0, "d": 0.0, "f_ref": 2e4, "s_ref": 2.0}, 1e-3, 0.06, False)
    assert v == pytest.approx(-1.0, rel=1e-9) and smax <= 0.02 * (1.0 + 1e-9) and not errors
    assert d_end[0] == pytest.approx(0.01 - (0.06 - 0.01 - math.pi / 100.0), abs=3e-4)
