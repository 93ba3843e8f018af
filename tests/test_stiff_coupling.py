"""Stiff contacts at large communication steps: the ElastoGap's interface outputs (the derivatives of
its law) and inertia-aware coupling (m_a/m_b, closed-form contact motion). The master's implicit
scheme that uses the interface outputs: tests/cosim/test_implicit.py."""

import math

import numpy as np
import pytest

from contactfmu.components.ElastoGap import law as elastogap
from contactfmu.cosim import CosimError, System
from contactfmu.monolithic import elastogap_impact

E_REF = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)


def test_interface_outputs_are_the_derivatives_of_the_law():
    """elastogap.interface against central differences in every region of the law (n = 1, 1.5)."""
    for n in (1.0, 1.5):
        for s_rel, v_rel in [
            (-0.01, 0.0),
            (-0.01, -10.0),
            (-0.01, 10.0),
            (0.01, -1.0),
            (-0.002, 0.05),
        ]:
            k, d = elastogap.interface(s_rel, v_rel, 1e4, 20.0, 0.0, n)
            ds, dv = 1e-9, 1e-9
            f = lambda s, v: elastogap.force(s, v, 1e4, 20.0, 0.0, n)[0]  # noqa: E731
            # measured: at most 8.3e-8 relative (the rounding of the differences), 0 where the value is 0
            assert k == pytest.approx(
                (f(s_rel + ds, v_rel) - f(s_rel - ds, v_rel)) / (2 * ds), rel=1e-6, abs=1e-9
            )
            assert d == pytest.approx(
                (f(s_rel, v_rel + dv) - f(s_rel, v_rel - dv)) / (2 * dv), rel=1e-6, abs=1e-9
            )


def test_closed_form_elastogap_motion_matches_the_monolithic_impact():
    """elastogap.predict: 1 kg at 1 m/s from 1 mm before contact; the rebound velocity is the
    monolithic (scipy, rtol 1e-12) restitution."""
    out, onset, changes = elastogap.predict(1e-3, -1.0, 1.0, 0.0, (0.03,), 1e5, 20.0)
    assert out[0][1] == pytest.approx(E_REF["restitution"], rel=1.5e-12)  # measured 1.3e-13
    assert (
        onset == pytest.approx(1e-3, rel=3e-15) and changes >= 3
    )  # contact, damper bounds, release; 2.2e-16


def split(fmu_dir, h, **gap):
    s = System(interpolate_inputs=False)  # plain coupling: values held over the step
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=1e5, d=20.0, **gap)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=1.234567e-3, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    return s.simulate(0.04, h, outputs=["mass.v", "mass.s"])


@pytest.mark.parametrize("h", [1e-4, 1e-3, E_REF["contact_time"] / 2, 8e-3])
def test_inertia_aware_elastogap_keeps_the_restitution_at_any_step(fmu_dir, h):
    """With m_b = 1 kg the element integrates the impact itself: the restitution is the
    monolithic one even with two steps of contact (h = Tc/2; plain coupling: +205%) or one."""
    r = split(fmu_dir, h, m_b=1.0)
    # measured 1.29e-13 .. 1.35e-13 at the four steps (the monolithic reference's own 1.3e-13)
    assert r["mass.v"][-1] == pytest.approx(E_REF["restitution"], rel=1.5e-12)
    plain = split(fmu_dir, h)["mass.v"][-1]
    assert abs(plain / E_REF["restitution"] - 1) > 0.02  # plain coupling: > 2% off at these steps


@pytest.mark.parametrize("h", [1e-4, E_REF["contact_time"] / 2])
def test_inertia_aware_elastogap_transmits_the_law_impulse_and_never_pulls(fmu_dir, h):
    """The held force is a coupling force (documented): summed over the steps it transmits the
    law's impulse m*(1 + e)*v0, and like the law it never pulls (not even on one step to land the
    bodies on the law's motion); the law outputs f_c + f_d never pull."""
    s = System(interpolate_inputs=False)
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=1e5, d=20.0, m_b=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=1.234567e-3, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    r = s.simulate(0.04, h, outputs=["gap.f", "gap.f_c", "gap.f_d"])
    f = np.asarray(r["gap.f"])
    impulse = -f[:-1].sum() * h  # f at t_k is held over [t_k, t_k + h]
    assert impulse == pytest.approx(1.0 + E_REF["restitution"], rel=1e-12)  # measured 6.4e-14
    assert np.all(f <= 0.0)
    assert np.all(np.asarray(r["gap.f_c"]) + np.asarray(r["gap.f_d"]) <= 0.0)


def test_inertia_aware_elastogap_needs_the_linear_law(fmu_dir):
    with pytest.raises(CosimError, match=r"Invalid parameter n = 1\.5.*needs n = 1"):
        split(fmu_dir, 1e-3, m_b=1.0, n=1.5)


def test_contact_inside_a_first_step_longer_than_planned_is_not_missed(fmu_dir):
    """The first step is planned with the DefaultExperiment step (1e-4 s); at h = 5 ms the contact
    (after 1.23 ms) lies inside it: the element starts its shadow retroactively and the rebound is
    still exact; the body penetrates that first step unopposed (3.77 mm, not 3.02 mm). Only a pull
    would land it on the law's motion from there, and it never pulls: it gets the
    law's velocity at the end of the next step, w(10 ms) of the law's motion, so it reaches
    x1 + h*(w1 + w(10 ms))/2 = 4.10 mm, and keeps the law's impulse."""
    r = split(fmu_dir, 5e-3, m_b=1.0)
    assert r["mass.v"][-1] == pytest.approx(E_REF["restitution"], rel=1.5e-12)  # measured 1.3e-13
    x1 = 1.234567e-3 - 5e-3
    assert r["mass.s"][1] == pytest.approx(x1, rel=1e-12)
    w2 = elastogap.predict(1.234567e-3, -1.0, 1.0, 0.0, (0.01,), 1e5, 20.0)[0][0][1]
    assert min(r["mass.s"]) == pytest.approx(x1 + 5e-3 * (w2 - 1.0) / 2, rel=1e-12)
    assert math.isfinite(r["mass.s"][-1])
