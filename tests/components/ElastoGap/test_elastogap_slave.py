"""The ElastoGap slave class driven in-process through its FMI methods, without building an FMU:
the force law, its derivative and interface outputs, the heat port, the coupling's parameter
check, and a Mass coupled to it rebounding as the law says; expected values from the MSL 4.1
Translational.Components.ElastoGap documentation written out here.
"""

import math

import pytest
from slave_driver import REL, Driver, bounce, compliant_signs, computes_in_a_step, d_end

from contactfmu.components.ElastoGap.slave import ElastoGap
from contactfmu.components.Mass.slave import Mass
from contactfmu.monolithic import elastogap_impact


def _elastogap(s_rel, v_rel, c, dd, s0, n, s_ref, f_ref):
    """MSL 4.1 ElastoGap, written from the documentation: (f, f_c, f_d, contact)."""
    if s_rel >= s0:
        return 0.0, 0.0, 0.0, False
    fr = f_ref if f_ref > 0.0 else c * s_ref
    f_c = -fr * abs((s_rel - s0) / s_ref) ** n
    f_d = dd * v_rel
    f_d = max(f_c, min(-f_c, f_d))
    return f_c + f_d, f_c, f_d, True


@pytest.mark.parametrize(
    "s_rel, v_rel, n, s_ref, f_ref",
    [
        (-0.02, -0.5, 1.0, 1.0, 0.0),  # contact, approaching, damper bounded to f_c
        (-0.02, -0.01, 1.0, 1.0, 0.0),  # contact, damper unbounded
        (-0.02, 0.01, 1.0, 1.0, 0.0),  # contact, separating slowly
        (-0.02, 3.0, 1.0, 1.0, 0.0),  # contact, fast separation: f = 0
        (-0.02, -0.01, 1.5, 0.1, 0.0),  # Hertzian exponent, reference compression
        (-0.02, -0.01, 1.5, 0.1, 7.0),  # explicit f_ref
        (-0.02, -0.001, 1.0, 1.0, 0.5),  # explicit f_ref below 1 N
        (0.03, -1.0, 1.0, 1.0, 0.0),  # no contact
        (0.01, 1.0, 1.5, 1.0, 0.0),  # s_rel = s_rel0: no contact
    ],
)
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
    d.inputs(
        flange_a__s=0.0, flange_b__s=s_rel, flange_a__v=0.0, flange_b__v=v_rel, flange_b__a=a_rel
    )
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
    d.inputs(
        flange_a__s=0.0,
        flange_b__s=-0.02,
        flange_a__v=0.0,
        flange_b__v=-0.01,
        flange_a__a=1.0,
        flange_b__a=-2.0,
    )
    assert d.get("heatPort.Q_flow") == 0.0 and d.get("lossPower") > 0.0
    # unbounded damper, n = 1: df/dt = c*v_rel + d*a_rel
    assert d.der("f") == pytest.approx(c * -0.01 + dd * -3.0, rel=REL)
    assert d.der("flange_a.f") == -d.der("f")
    assert d.get("interface.c") == pytest.approx(c, rel=REL)
    assert d.get("interface.d") == pytest.approx(dd, rel=REL)
    d.inputs(flange_b__s=0.5)  # out of contact: nothing
    assert d.der("f") == 0.0 and d.get("interface.c", "interface.d") == [0.0, 0.0]


def test_elastogap_coupling_needs_n_1_and_says_so():
    d = Driver(ElastoGap, m_a=1.0, n=1.5)
    assert "the inertia-aware coupling (m_a or m_b > 0) needs n = 1" in d.errors()[0]
    assert d.errors()[0] == (
        "Invalid parameter n = 1.5: the inertia-aware coupling (m_a or m_b > 0) needs n = 1 "
        "(a piecewise linear law it solves in closed form); set m_a = m_b = 0 for n != 1"
    )


@pytest.mark.parametrize("h", [1e-3, 5e-3])
@pytest.mark.parametrize("jacobi", [False, True])
def test_elastogap_coupling_gives_the_laws_rebound(h, jacobi):
    """ElastoGap without damping (d = 0, n = 1), c = 1e4 N/m, 1 kg at 1 m/s: an elastic impact,
    the mass leaves at -1 m/s and compresses the spring by at most v0*sqrt(m/c) = 0.01 m."""
    v, smax, errors, e = bounce(
        ElastoGap, {"c": 1e4, "d": 0.0, "s_rel0": 0.3}, h, 0.06, jacobi, 0.3
    )
    assert v == pytest.approx(-1.0, rel=1e-9)
    assert 0.01 < smax <= 0.02 * (1.0 + 1e-9)
    assert d_end[0] == pytest.approx(
        0.01 - (0.06 - 0.01 - math.pi / 100.0), abs=3e-4
    )  # contact time pi/wn
    assert not errors
    assert e.der("f") == 0.0 and e.get("interface.c", "interface.d") == [0.0, 0.0]


def test_elastogap_coupling_with_reference_compression():
    """The coupling plans with the law's stiffness f_ref/s_ref (here f_ref = 2e4 N at s_ref = 2 m,
    so 1e4 N/m, c not used): the same elastic rebound."""
    v, smax, errors, _ = bounce(
        ElastoGap, {"c": 5.0, "d": 0.0, "f_ref": 2e4, "s_ref": 2.0}, 1e-3, 0.06, False
    )
    assert v == pytest.approx(-1.0, rel=1e-9) and smax <= 0.02 * (1.0 + 1e-9) and not errors
    assert d_end[0] == pytest.approx(0.01 - (0.06 - 0.01 - math.pi / 100.0), abs=3e-4)


@pytest.mark.parametrize("masses, computes", [({}, 1), ({"m_a": 1.0, "m_b": 2.0}, 2)])
def test_a_step_computes_the_outputs_before_it_only_for_the_coupler(masses, computes):
    """Without m_a/m_b step() reads the inputs alone: a doStep after new inputs computes the
    outputs once, at its end (f = f_c + f_d = -10 - 1 N at s_rel = -1 mm, v_rel = -0.1 m/s);
    with the coupler, which computing the outputs advances, before step() too."""
    d = Driver(ElastoGap, c=1e4, d=10.0, **masses)
    motion = dict(flange_a__s=0.0, flange_a__v=0.0, flange_b__s=-0.001, flange_b__v=-0.1)
    times = computes_in_a_step(d, 1e-4, **motion)
    assert times == [0.0] * (computes - 1) + [1e-4]
    if not masses:
        assert d.get("f") == pytest.approx(-11.0, rel=REL)


def test_the_coupled_elastogap_never_pulls_on_a_split_impact():
    """The held force of the inertia-aware coupling only pushes, as the law does (Coupler
    pushes_only): a 1 kg mass at 1 m/s into the gap (c = 1e5, d = 20, m_b = 1), the contact
    starting 1.234567 ms in, 0.5 ms Gauss-Seidel steps: f <= 0 at every step (the plan pulled
    +4.35 N on one step without it, tests/components/ElastoGap/test_elastogap_held_force.py), and
    the mass leaves with the law's rebound."""
    mass = Driver(Mass, m=1.0, s_start=1.234567e-3, v_start=-1.0)
    gap = Driver(ElastoGap, c=1e5, d=20.0, m_b=1.0)
    h, forces = 5e-4, []
    for k in range(80):
        gap.inputs(flange_b__s=mass.get("s"), flange_b__v=mass.get("v"))
        forces.append(gap.get("flange_b.f"))
        mass.inputs(flange_a__f=forces[-1])
        assert mass.s.do_step(k * h, h) and gap.s.do_step(k * h, h)
    assert max(forces) <= 0.0 and min(forces) < -100.0  # (the impact: pushes only)
    rebound = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)["restitution"]
    assert mass.get("v") == pytest.approx(rebound, rel=1e-9)
