"""Stiff contacts at large communication steps: the implicit interface scheme of the master
(interface stiffness/damping outputs, backward Euler, Newton on nonlinear elements) and the
ElastoGap's inertia-aware coupling (m_a/m_b, closed-form contact motion)."""
import math

import numpy as np
import pytest

from contactfmu.cosim import CosimError, System
from contactfmu.monolithic import elastogap_impact
from contactfmu.components.ElastoGap import law as elastogap

E_REF = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)


def plate(fmu_dir, element, **params):
    """A 10 g plate pressed by a constant 65 N against a stiff element on a wall (PreLoad's
    plates: c = 1e6 N/m, d = 250 N.s/m): explicit coupling is unstable above 2*m/d = 8e-5 s."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("contact", fmu_dir / f"{element}.fmu", **params)
    s.add("plate", fmu_dir / "Mass.fmu", m=0.01, s_start=0.0, v_start=0.0)
    s.add("push", fmu_dir / "Force.fmu", f=-65.0)
    s.connect("wall.flange", "contact.flange_a")
    s.connect("contact.flange_b", "plate.flange_a")
    s.connect("push.flange", "plate.flange_b")
    return s


@pytest.mark.parametrize("element", ["SpringDamper", "ElastoGap"])
def test_implicit_scheme_is_stable_and_settles_at_the_static_penetration(fmu_dir, element):
    params = dict(c=1e6, d=250.0) if element == "SpringDamper" else dict(c=1e6, d=250.0, s_rel0=0.0)
    r = plate(fmu_dir, element, **params).simulate(0.05, 1e-3, outputs=["plate.s", "plate.v"], scheme="implicit")
    assert r["plate.s"][-1] == pytest.approx(-65.0 / 1e6, rel=1e-13)  # c*|s| = 65 N; measured 7.5e-15
    assert abs(r["plate.v"][-1]) < 2e-14                              # measured 1.4e-15 m/s
    assert np.all(np.isfinite(r["plate.s"])) and np.max(np.abs(r["plate.s"])) < 2 * 65.0 / 1e6


def test_explicit_coupling_of_the_same_plate_is_unstable(fmu_dir):
    """The default Gauss-Seidel coupling of the same plate at 1 ms: h*d/m = 25, each step
    multiplies the error about 600-fold."""
    r = plate(fmu_dir, "SpringDamper", c=1e6, d=250.0).simulate(0.05, 1e-3, outputs=["plate.s"])
    assert abs(r["plate.s"][-1]) > 1e100


def test_implicit_newton_follows_the_elastogap_regions(fmu_dir):
    """Released from 1 mm inside the gap contact, the plate is pushed out: the bounded damper
    (f = 0 while separating fast) and the contact's end are regions the linearization at the
    step's start does not see; the Newton iteration on the element finds them. The plate ends at
    rest at the static penetration whatever the step."""
    for h in (1e-3, 5e-3):
        s = plate(fmu_dir, "ElastoGap", c=1e6, d=250.0)
        s.instances["plate"].values.update(s_start=-1e-3)
        r = s.simulate(1.0, h, outputs=["plate.s", "contact.f"], scheme="implicit")
        assert r["plate.s"][-1] == pytest.approx(-6.5e-5, rel=5e-12)   # measured 7.5e-15 (1 ms), 4.3e-13 (5 ms)
        assert np.all(r["contact.f"] <= 0.0)      # the ElastoGap never pulls


def test_interface_outputs_are_the_derivatives_of_the_law():
    """elastogap.interface against central differences in every region of the law (n = 1, 1.5)."""
    for n in (1.0, 1.5):
        for s_rel, v_rel in [(-0.01, 0.0), (-0.01, -10.0), (-0.01, 10.0), (0.01, -1.0), (-0.002, 0.05)]:
            k, d = elastogap.interface(s_rel, v_rel, 1e4, 20.0, 0.0, n)
            ds, dv = 1e-9, 1e-9
            f = lambda s, v: elastogap.force(s, v, 1e4, 20.0, 0.0, n)[0]   # noqa: E731
            # measured: at most 8.3e-8 relative (the rounding of the differences), 0 where the value is 0
            assert k == pytest.approx((f(s_rel + ds, v_rel) - f(s_rel - ds, v_rel)) / (2 * ds), rel=1e-6, abs=1e-9)
            assert d == pytest.approx((f(s_rel, v_rel + dv) - f(s_rel, v_rel - dv)) / (2 * dv), rel=1e-6, abs=1e-9)


def test_closed_form_elastogap_motion_matches_the_monolithic_impact():
    """elastogap.predict: 1 kg at 1 m/s from 1 mm before contact; the rebound velocity is the
    monolithic (scipy, rtol 1e-12) restitution."""
    out, onset, changes = elastogap.predict(1e-3, -1.0, 1.0, 0.0, (0.03,), 1e5, 20.0)
    assert out[0][1] == pytest.approx(E_REF["restitution"], rel=1.5e-12)   # measured 1.3e-13
    assert onset == pytest.approx(1e-3, rel=3e-15) and changes >= 3   # contact, damper bounds, release; 2.2e-16


def split(fmu_dir, h, **gap):
    s = System(interpolate_inputs=False)   # plain coupling: values held over the step
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
    assert abs(plain / E_REF["restitution"] - 1) > 0.02   # plain coupling: > 2% off at these steps


@pytest.mark.parametrize("h", [1e-4, E_REF["contact_time"] / 2])
def test_inertia_aware_elastogap_transmits_the_law_impulse_and_pulls_on_one_step_at_most(fmu_dir, h):
    """The held force is a coupling force (documented): summed over the steps it transmits the
    law's impulse m*(1 + e)*v0, and where it pulls to land the bodies on the law's motion it does
    so on one step of the impact; the law outputs f_c + f_d never pull."""
    s = System(interpolate_inputs=False)
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=1e5, d=20.0, m_b=1.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=1.234567e-3, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    r = s.simulate(0.04, h, outputs=["gap.f", "gap.f_c", "gap.f_d"])
    f = np.asarray(r["gap.f"])
    impulse = -f[:-1].sum() * h     # f at t_k is held over [t_k, t_k + h]
    assert impulse == pytest.approx(1.0 + E_REF["restitution"], rel=1e-12)   # measured 6.4e-14
    assert (f > 0.0).sum() <= 1
    assert np.all(np.asarray(r["gap.f_c"]) + np.asarray(r["gap.f_d"]) <= 0.0)


def test_inertia_aware_elastogap_needs_the_linear_law(fmu_dir):
    with pytest.raises(CosimError, match=r"Invalid parameter n = 1\.5.*needs n = 1"):
        split(fmu_dir, 1e-3, m_b=1.0, n=1.5)


def test_contact_inside_a_first_step_longer_than_planned_is_not_missed(fmu_dir):
    """The first step is planned with the DefaultExperiment step (1e-4 s); at h = 5 ms the contact
    (after 1.23 ms) lies inside it: the element starts its shadow retroactively and the rebound is
    still exact; the body penetrates that first step unopposed (3.77 mm, not 3.02 mm)."""
    r = split(fmu_dir, 5e-3, m_b=1.0)
    assert r["mass.v"][-1] == pytest.approx(E_REF["restitution"], rel=1.5e-12)   # measured 1.3e-13
    assert min(r["mass.s"]) == pytest.approx(1.234567e-3 - 5e-3, rel=1e-12)
    assert math.isfinite(r["mass.s"][-1])
