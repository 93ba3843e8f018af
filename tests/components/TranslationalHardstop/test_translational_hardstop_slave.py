"""The TranslationalHardstop slave class driven in-process through its FMI methods, without
building an FMU: the force law and its derivative against the MapleSim Translational Hardstop
help page written out here, and a Mass coupled to it rebounding as the law says.
"""

import math

import pytest
from slave_driver import REL, Driver, bounce, compliant_signs, computes_in_a_step, d_end

from contactfmu.components.TranslationalHardstop.slave import TranslationalHardstop


def _hardstop(s_rel, v_rel, b, c, dd):
    if b <= 2e-10:
        return c * s_rel + dd * v_rel, (s_rel > 0) - (s_rel < 0)
    if s_rel > b / 2:
        return c * (s_rel - b / 2) + dd * v_rel, 1
    if s_rel < -b / 2:
        return c * (s_rel + b / 2) + dd * v_rel, -1
    return 0.0, 0


@pytest.mark.parametrize(
    "s_rel, v_rel, b",
    [
        (0.3, 0.5, 0.4),
        (0.3, -0.5, 0.4),
        (-0.3, 0.5, 0.4),
        (-0.3, -2.0, 0.4),
        (0.1, 1.0, 0.4),
        (-0.15, -1.0, 0.4),
        (0.05, -1.0, 0.0),
        (-0.05, 1.0, 1e-10),
    ],
)
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
    d.inputs(
        flange_a__s=0.0,
        flange_b__s=0.3,
        flange_a__v=0.0,
        flange_b__v=0.5,
        flange_a__a=1.0,
        flange_b__a=3.0,
    )
    assert d.der("F") == pytest.approx(c * 0.5 + dd * 2.0, rel=REL)
    assert d.der("flange_a.f") == -d.der("F")
    assert d.get("interface.c", "interface.d") == [c, dd]
    d.inputs(flange_b__s=0.1)
    assert d.der("F") == 0.0


@pytest.mark.parametrize("h", [1e-3, 5e-3])
@pytest.mark.parametrize("jacobi", [False, True])
def test_hardstop_coupling_gives_the_laws_rebound(h, jacobi):
    """Upper stop at b/2 = 0.01 m, c = 1e4 N/m, d = 20 N.s/m, 1 kg: inside the stop the law is the
    linear oscillator x'' = -(c*x + d*x')/m (the damper unbounded), so the mass leaves the stop
    at t = pi/wd with v = -v0*exp(-zeta*wn*pi/wd), and x never exceeds its first maximum."""
    c, dd, m, v0 = 1e4, 20.0, 1.0, 1.0
    wn, zeta = math.sqrt(c / m), dd / (2.0 * math.sqrt(c * m))
    wd, a = wn * math.sqrt(1.0 - zeta**2), zeta * wn
    t_max = math.atan2(wd, a) / wd
    x_max = v0 / wd * math.exp(-a * t_max) * math.sin(wd * t_max)
    v, smax, errors, e = bounce(
        TranslationalHardstop, {"b": 0.02, "c": c, "d": dd}, h, 0.06, jacobi, 0.3
    )
    assert v == pytest.approx(-v0 * math.exp(-a * math.pi / wd), rel=1e-9)
    # contact from t = 0.01 s for pi/wd; the coupling may spread the impact over the steps around it
    assert d_end[0] == pytest.approx(0.01 + v * (0.06 - 0.01 - math.pi / wd), abs=3e-4)
    assert 0.01 < smax <= 0.01 + x_max * (1.0 + 1e-9)
    assert not errors
    assert e.der("F") == 0.0 and e.get("interface.c", "interface.d") == [0.0, 0.0]


@pytest.mark.parametrize("masses, computes", [({}, 1), ({"m_a": 1.0, "m_b": 2.0}, 2)])
def test_a_step_computes_the_outputs_before_it_only_for_the_coupler(masses, computes):
    """Without m_a/m_b step() reads the inputs alone: a doStep after new inputs computes the
    outputs once, at its end (F = c*(s_rel - b/2) + d*v_rel = 500*0.1 + 7*0.5 N); with the
    coupler, which computing the outputs advances, before step() too."""
    d = Driver(TranslationalHardstop, b=0.4, c=500.0, d=7.0, **masses)
    motion = dict(flange_a__s=0.0, flange_a__v=0.0, flange_b__s=0.3, flange_b__v=0.5)
    times = computes_in_a_step(d, 1e-4, **motion)
    assert times == [0.0] * (computes - 1) + [1e-4]
    if not masses:
        assert d.get("F") == pytest.approx(53.5, rel=REL)
