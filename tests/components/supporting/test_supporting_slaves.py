"""The supporting slave classes (Spring, Damper, SpringDamper, Mass, Fixed, Force, Sine) driven
in-process through their FMI methods, without building an FMU: laws and sign conventions against
closed forms written here from the documentation (MSL 4.1 Translational.Components and Sources,
docs/conventions.md), flange positions, output derivatives, the exact motion of the Mass.
"""

import math

import pytest
from slave_driver import REL, Driver, compliant_signs

from contactfmu.components.Damper.slave import Damper
from contactfmu.components.Fixed.slave import Fixed
from contactfmu.components.Force.slave import Force
from contactfmu.components.Mass.slave import Mass
from contactfmu.components.Sine.slave import Sine
from contactfmu.components.Spring.slave import Spring
from contactfmu.components.SpringDamper.slave import SpringDamper

# ---- compliant elements: the law at the inputs -------------------------------------------------


@pytest.mark.parametrize(
    "sa, sb, va, vb", [(0.1, 0.5, 0.0, 0.0), (0.3, -0.2, 1.0, -2.0), (-1.0, -1.0, 0.5, 0.5)]
)
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
    d.inputs(
        flange_a__s=0.2,
        flange_b__s=0.7,
        flange_a__v=va,
        flange_b__v=vb,
        flange_a__a=aa,
        flange_b__a=ab,
    )
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
    d.inputs(
        flange_a__s=sa,
        flange_b__s=sb,
        flange_a__v=va,
        flange_b__v=vb,
        flange_a__a=aa,
        flange_b__a=ab,
    )
    compliant_signs(d, c * (sb - sa - s0) + dd * (vb - va))
    assert d.get("s_rel") == pytest.approx(sb - sa, rel=REL)
    assert d.get("v_rel") == pytest.approx(vb - va, rel=REL)
    assert d.get("lossPower") == pytest.approx(dd * (vb - va) ** 2, rel=REL)
    assert d.der("f") == pytest.approx(c * (vb - va) + dd * (ab - aa), rel=REL)
    assert d.get("interface.c", "interface.d") == [c, dd]


# ---- inertial and source elements ---------------------------------------------------------------


def test_mass_sign_convention_and_flanges():
    m, L = 2.0, 0.4
    d = Driver(Mass, m=m, L=L, s_start=1.0, v_start=-0.5)
    d.inputs(
        flange_a__f=3.0,
        flange_a__f2=1.0,
        flange_a__f3=-0.5,
        flange_a__f4=0.25,
        flange_b__f=-2.0,
        flange_b__f2=0.5,
        flange_b__f3=0.125,
        flange_b__f4=-1.0,
    )
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
    d.s, d.vr, d.kind = (
        s,
        {v.name: v.vr for v in s.variable_table()},
        {v.name: v.type for v in s.variable_table()},
    )
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
    d.inputs(flange_b__f=F)  # the body receives -F
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
    assert d.get("s") == pytest.approx(a * h * h / 2 + j * h**3 / 6, rel=1e-12)
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
    assert d.get("y") == pytest.approx(
        off + amp * math.sin(2 * math.pi * fr * (t - t0) + ph), rel=1e-12
    )
    assert d.der("y") == pytest.approx(
        amp * 2 * math.pi * fr * math.cos(2 * math.pi * fr * (t - t0) + ph), rel=1e-12
    )
