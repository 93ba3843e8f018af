"""The implicit scheme (cosim.algorithms.fixed.Implicit, cosim.coupling.ImplicitCoupling): backward Euler on the
interface with the inertia the bodies declare, stable stiff contacts at large steps, Newton on nonlinear elements."""

import numpy as np
import pytest

from contactfmu.cosim import System


@pytest.mark.parametrize("m", [0.5, 3.0])
def test_implicit_coupling_uses_the_inertia_the_body_declares(fmu_dir, m):
    """Wall -- Spring (c) -- Mass (m) in scheme="implicit": backward Euler on the interface with the
    mass the Mass FMU declares by its output interface.m (conventions.INERTIA, read in
    initialization mode). The recursion written out: the held spring force at the step's end for the
    motion it causes, m*y = -c*(s + h*v + h^2/2*y), then s += h*v + h^2/2*y, v += h*y. A master
    that took another inertia would follow another recursion (both masses are tested)."""
    c, h, s0 = 1e4, 1e-2, 0.1  # h*sqrt(c/m) = 1.4 and 0.58: the spring is stiff for the step
    sys = System()
    sys.add("wall", fmu_dir / "Fixed.fmu")
    sys.add("spring", fmu_dir / "Spring.fmu", c=c)
    sys.add("mass", fmu_dir / "Mass.fmu", m=m, s_start=s0)
    sys.connect("wall.flange", "spring.flange_a")
    sys.connect("spring.flange_b", "mass.flange_a")
    r = sys.simulate(0.2, h, scheme="implicit", outputs=["mass.s", "mass.v", "mass.interface.m"])
    assert np.all(r["mass.interface.m"] == m)
    s, v, expected = s0, 0.0, [s0]
    for _ in range(len(r.time) - 1):
        y = -c * (s + h * v) / (m + c * h * h / 2)
        s, v = s + h * v + h * h / 2 * y, v + h * y
        expected.append(s)
    assert np.max(np.abs(r["mass.s"] - np.array(expected))) < 1e-12


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
    r = plate(fmu_dir, element, **params).simulate(
        0.05, 1e-3, outputs=["plate.s", "plate.v"], scheme="implicit"
    )
    assert r["plate.s"][-1] == pytest.approx(
        -65.0 / 1e6, rel=1e-13
    )  # c*|s| = 65 N; measured 7.5e-15
    assert abs(r["plate.v"][-1]) < 2e-14  # measured 1.4e-15 m/s
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
        assert r["plate.s"][-1] == pytest.approx(
            -6.5e-5, rel=5e-12
        )  # measured 7.5e-15 (1 ms), 4.3e-13 (5 ms)
        assert np.all(r["contact.f"] <= 0.0)  # the ElastoGap never pulls
