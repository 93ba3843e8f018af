"""The ElastoGap FMU through FMI calls (fmpy): every documented statement of MSL 4.1
Translational.Components.ElastoGap (the force law table, never pulling, continuity, s_rel0, the
exponent and reference scaling, the derivative output, the heat port, parameter checks), and the
impact of a mass against the closed-form restitution and the Hertz contact time.
"""

import math

import numpy as np
import pytest
from elastogap_written_out import restitution
from fmpy.fmi1 import FMICallException
from fmu_helpers import Slave, slave_fixture
from scipy.integrate import quad

from contactfmu.components.ElastoGap import law as elastogap
from contactfmu.cosim import System
from contactfmu.monolithic import elastogap_impact

gap = slave_fixture("ElastoGap")


def at(s, s_rel, v_rel, a_rel=0.0):
    s.set(
        flange_a__s=0.0,
        flange_a__v=0.0,
        flange_a__a=0.0,
        flange_b__s=s_rel,
        flange_b__v=v_rel,
        flange_b__a=a_rel,
    )
    return s


@pytest.mark.parametrize("s_rel", [-0.3, -0.05, -1e-4, 0.0, 0.2])
@pytest.mark.parametrize("v_rel", [-3.0, -0.1, 0.0, 0.4, 5.0])
def test_force_law_table(gap, s_rel, v_rel):
    c, d = 50.0, 4.0
    s = at(gap(c=c, d=d), s_rel, v_rel)
    f_c = -c * abs(s_rel) if s_rel < 0 else 0.0
    f_d = min(max(d * v_rel, f_c), -f_c) if s_rel < 0 else 0.0
    assert s.get("f", "f_c", "f_d") == pytest.approx([f_c + f_d, f_c, f_d], abs=1e-15)
    assert s.get("flange_b.f", "flange_a.f") == pytest.approx([f_c + f_d, -(f_c + f_d)], abs=1e-15)
    assert s.fmu.getBoolean(s.vr(["contact"]))[0] == (s_rel < 0)
    assert s.get("lossPower") == pytest.approx(f_d * v_rel, abs=1e-15) and s.get("lossPower") >= 0.0


def test_never_pulls_even_when_separating_fast_while_the_unmodified_law_would(gap):
    c, d = 1e4, 200.0
    s = gap(c=c, d=d)
    for v_rel in (0.5, 2.0, 20.0):
        at(s, -1e-3, v_rel)  # in contact, separating
        assert elastogap.unmodified_force(-1e-3, v_rel, c, d) > 0.0  # would pull
        assert s.get("f") == 0.0  # bounded: f_d = -f_c, f = 0
        assert s.fmu.getBoolean(s.vr(["contact"]))[0]


def test_force_is_continuous_at_contact_start_with_speed(gap):
    c, d, v = 1e5, 50.0, -2.0
    s = gap(c=c, d=d)
    for eps in (1e-3, 1e-5, 1e-7, 1e-9):
        at(s, -eps, v)
        assert abs(s.get("f")) <= 2 * c * eps * (1 + 1e-12)  # -> 0 as the penetration -> 0
        # the plain law clipped at zero jumps to d*v at the first touch (curve 2 of the docs)
        assert elastogap.clipped_force(-eps, v, c, d) == pytest.approx(-c * eps + d * v)
    at(s, 0.0, v)
    assert s.get("f") == 0.0


def test_s_rel0_shifts_the_contact_point(gap):
    s = gap(c=100.0, d=0.0, s_rel0=0.2)
    assert at(s, 0.25, 0.0).get("f") == 0.0
    assert at(s, 0.2, 0.0).get("f") == 0.0
    assert at(s, 0.15, 0.0).get("f") == pytest.approx(-5.0)
    s = gap(c=100.0, d=0.0, s_rel0=-0.02)  # as in MSL HeatLosses
    assert at(s, -0.01, 0.0).get("f") == 0.0
    assert at(s, -0.05, 0.0).get("f") == pytest.approx(-3.0)


def test_exponent_and_reference_scaling(gap):
    s = gap(c=1e6, d=0.0, n=1.5)
    assert at(s, -1e-2, 0.0).get("f") == pytest.approx(-1e6 * 1e-3, rel=1e-12)
    s = gap(c=1.0, d=0.0, n=2.0, s_ref=1e-3, f_ref=50.0)  # |f_c| = f_ref at s_ref
    assert at(s, -1e-3, 0.0).get("f") == pytest.approx(-50.0, rel=1e-12)
    assert at(s, -2e-3, 0.0).get("f") == pytest.approx(-200.0, rel=1e-12)


def test_output_derivative_is_the_time_derivative_of_the_force(gap):
    c, d, n = 2e4, 30.0, 1.5
    s = gap(c=c, d=d, n=n)
    for s_rel, v_rel, a_rel in (
        (-2e-3, -0.4, 3.0),
        (-1e-3, 0.01, -2.0),
        (-5e-4, 0.9, 1.0),
        (-3e-3, -5.0, 0.0),
    ):
        rate = at(s, s_rel, v_rel, a_rel).fmu.getRealOutputDerivatives(s.vr(["f"]), [1])[0]
        dt = 1e-8
        f1 = elastogap.force(
            s_rel + v_rel * dt + a_rel * dt * dt / 2, v_rel + a_rel * dt, c, d, 0.0, n
        )[0]
        f0 = elastogap.force(
            s_rel - v_rel * dt + a_rel * dt * dt / 2, v_rel - a_rel * dt, c, d, 0.0, n
        )[0]
        assert rate == pytest.approx((f1 - f0) / (2 * dt), rel=1e-5, abs=1e-6)


def test_heat_port(gap):
    s = at(gap(c=10.0, d=5.0, useHeatPort=True), -0.1, -0.1)
    assert s.get("heatPort.Q_flow") == pytest.approx(-s.get("lossPower")) and s.get("lossPower") > 0
    s = at(gap(c=10.0, d=5.0), -0.1, -0.1)
    assert s.get("heatPort.Q_flow") == 0.0


@pytest.mark.parametrize(
    "param,value,rule",
    [
        ("c", -1.0, "[0.0, inf)"),
        ("d", -0.5, "[0.0, inf)"),
        ("n", 0.5, "[1.0, inf)"),
        ("s_ref", 0.0, "(0.0, inf)"),
    ],
)
def test_invalid_values_are_rejected(fmu_dir, param, value, rule):
    s = Slave(fmu_dir / "ElastoGap.fmu")
    s.set(**{param: value})
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException) as exc:
        s.fmu.exitInitializationMode()
    assert exc.value.status == 3
    assert s.errors() == [
        f"Invalid parameter {param} = {value!r}"
        + (
            " N/m"
            if param == "c"
            else " N.s/m"
            if param == "d"
            else " m"
            if param == "s_ref"
            else ""
        )
        + f": valid range {rule}"
    ]


def test_nan_is_rejected(fmu_dir):
    s = Slave(fmu_dir / "ElastoGap.fmu")
    with pytest.raises(FMICallException):
        s.set(c=math.nan)
    assert any("c" in m and "nan" in m for m in s.errors())


def impact(fmu_dir, h, n=1.0, c=1e5, d=20.0, gap0=1.234567e-3, stop=0.03, interpolate=True):
    s = System(interpolate_inputs=interpolate)
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=c, d=d, n=n)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=gap0, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    return s.simulate(
        stop, h, outputs=["mass.v", "mass.s", "gap.contact", "gap.lossPower", "gap.f"]
    )


E_CLOSED = restitution(1.0, 1e5, 20.0)[
    0
]  # 0.9090084469..., phases: damper bounded to f_c, free, f = 0


def test_restitution_matches_the_monolithic_reference(fmu_dir):
    """The monolithic reference and the FMUs at 1e-5 s against the closed-form restitution of the
    linear law with the bounded damper (elastogap_written_out.restitution, 0.9090084469).
    Measured: monolithic 1.3e-13 relative (scipy, rtol 1e-12), tolerance 1e-12; FMUs 7.9e-7,
    tolerance 1e-5."""
    ref = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)
    assert ref["restitution"] == pytest.approx(E_CLOSED, rel=1e-12)
    res = impact(fmu_dir, 1e-5)
    assert res["mass.v"][-1] == pytest.approx(E_CLOSED, rel=1e-5)
    assert np.all(res["gap.f"] <= 0.0)


def test_hertz_impact_contact_time_matches_the_analytic_result(fmu_dir):
    """Hertz (n = 1.5, d = 0): delta_max = (5 m v^2/(4 K))^0.4, T = 2.943 delta_max / v = 5.1 ms.
    Measured: contact samples * h within 2.9e-7 s of T (tolerance h, the sampling resolution);
    contact time from the interpolated crossings of mass.s = 0 within 2.0e-8 s, tolerance 2e-7 s;
    largest compression 1.3e-6 relative, tolerance 1.3e-5; rebound speed 2.4e-7, tolerance 3e-6."""
    m, K, v = 1.0, 1e7, 1.0
    delta_max = (5 * m * v * v / (4 * K)) ** 0.4
    T = (
        2
        * delta_max
        / v
        * quad(lambda x: 1 / math.sqrt(1 - x**2.5), 0, 1, epsabs=1e-14, epsrel=1e-13)[0]
    )
    h = 1e-5
    res = impact(fmu_dir, h, n=1.5, c=K, d=0.0, stop=0.012)
    contact = res["gap.contact"] > 0.5
    t_contact = contact.sum() * h
    assert t_contact == pytest.approx(T, abs=h)  # T = 5.1 ms
    x, t = res["mass.s"], res.time
    (i,), (j,) = (
        np.flatnonzero((x[:-1] >= 0) & (x[1:] < 0)),
        np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0)),
    )

    def crossing(k):
        return t[k] + h * x[k] / (x[k] - x[k + 1])

    assert crossing(j) - crossing(i) == pytest.approx(T, abs=2e-7)
    assert -x.min() == pytest.approx(delta_max, rel=1.3e-5)
    assert res["mass.v"][-1] == pytest.approx(1.0, rel=3e-6)  # no damping: elastic


def test_loss_power_integral_equals_the_kinetic_energy_lost(fmu_dir):
    """Measured: trapezoid integral of lossPower (1e-5 s) 5.8e-6 relative from the kinetic energy
    the FMU mass lost, tolerance 6e-5 (1.7e-6 from the closed form's 0.5*(1 - e^2), tolerance 2e-5);
    the monolithic reference's dissipation 2.7e-13 from its own restitution, tolerance 3e-12."""
    h = 1e-5
    res = impact(fmu_dir, h)
    loss = res["gap.lossPower"]
    assert np.all(loss >= 0.0)
    dissipated = np.trapezoid(loss, res.time)
    lost = 0.5 * (1.0 - res["mass.v"][-1] ** 2)
    assert dissipated == pytest.approx(lost, rel=6e-5)
    assert dissipated == pytest.approx(0.5 * (1.0 - E_CLOSED**2), rel=2e-5)
    ref = elastogap_impact()
    assert ref["dissipated"] == pytest.approx(0.5 * (1 - ref["restitution"] ** 2), rel=3e-12)
