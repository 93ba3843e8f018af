"""Implicit couplings between two moving bodies (no wall): backward Euler on the interface
(scheme="implicit") and the adaptive master's composite step (TR-BDF2) couple both ends of the
element at once, through the cross terms of their linear system. Tied to a wall, an element has
one moving end and the cross term never enters; here it does. Checked against conservation
(no external force: the momentum is constant to rounding; a passive element: the energy never
grows) and against scipy's monolithic solution of the free two-mass chain."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from contactfmu.cosim import System
from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm

OUTPUTS = ["a.s", "a.v", "b.s", "b.v"]


def chain(fmu_dir, m1, m2, c, d, s2, v1, v2):
    """Mass a (m1, at 0 with v1) -- Spring or SpringDamper (c, d; s_rel0 = 0) -- Mass b (m2, at s2
    with v2); nothing else acts on them."""
    s = System()
    s.add("a", fmu_dir / "Mass.fmu", m=m1, L=0.0, s_start=0.0, v_start=v1)
    if d:
        s.add("el", fmu_dir / "SpringDamper.fmu", c=c, d=d)
    else:
        s.add("el", fmu_dir / "Spring.fmu", c=c)
    s.add("b", fmu_dir / "Mass.fmu", m=m2, L=0.0, s_start=s2, v_start=v2)
    s.connect("a.flange_b", "el.flange_a")
    s.connect("el.flange_b", "b.flange_a")
    return s


def run(system, stop, h, scheme):
    """scheme "implicit" (fixed steps h) or "composite": the adaptive master held to steps of h
    (rtol, atol 1e3: every step accepted), where the element is too stiff for h and every step is
    a composite implicit step."""
    if scheme == "implicit":
        return system.simulate(stop, step=h, scheme="implicit", outputs=OUTPUTS)
    r = system.simulate(
        stop,
        output_interval=h,
        scheme=AdaptiveAlgorithm(Adaptive(h0=h, hmax=h, rtol=1e3, atol=1e3)),
        outputs=OUTPUTS,
    )
    assert all(x.implicit and x.accepted for x in r.steps)
    return r


@pytest.mark.parametrize("scheme", ["implicit", "composite"])
@pytest.mark.parametrize("d", [0.0, 20.0], ids=["spring", "spring-damper"])
def test_a_stiff_free_chain_conserves_momentum_and_never_gains_energy(fmu_dir, scheme, d):
    """1 kg -- c = 1e6 N/m (d = 0 or 20 N.s/m) -- 2 kg at h = 10 ms (h*omega = 12: the mode is not
    resolved), stretched 1 mm with the bodies at 1 and 0.2 m/s. The momentum (1.4 kg.m/s) stays
    to rounding (measured <= 9e-16); the energy never grows (measured: the relative mode is removed
    or damped, 0.31..0.33 of the initial 1.04 J left, the centre of mass's 0.3267 J); the centre
    of mass moves at 1.4/3 m/s. A flipped cross term in the linear system (a[p][q] += c_e) gives
    the bodies' relative motion the wrong sign in the prediction: the energy grows 200-450 fold."""
    m1, m2, c = 1.0, 2.0, 1e6
    r = run(chain(fmu_dir, m1, m2, c, d, 1e-3, 1.0, 0.2), 0.2, 1e-2, scheme)
    assert len(r.time) == 21
    p = m1 * r["a.v"] + m2 * r["b.v"]
    assert np.abs(p - 1.4).max() < 1e-13
    energy = 0.5 * m1 * r["a.v"] ** 2 + 0.5 * m2 * r["b.v"] ** 2
    energy = energy + 0.5 * c * (r["b.s"] - r["a.s"]) ** 2
    assert energy[0] == pytest.approx(1.04)
    assert np.all(np.diff(energy) <= 1e-12 * energy[0])
    centre = 1.4**2 / (2 * (m1 + m2))  # the kinetic energy of the centre of mass, kept
    assert energy[-1] >= centre * (1 - 1e-12) and energy[-1] < 0.35
    s_centre = (m1 * r["a.s"] + m2 * r["b.s"]) / (m1 + m2)
    assert np.abs(s_centre - (2e-3 / 3 + 1.4 / 3 * r.time)).max() < 1e-12


@pytest.mark.parametrize(
    "scheme, first, ratio",
    [("composite", 8e-9, 3.5), ("implicit", 2e-5, 1.8)],
)
def test_a_free_chain_follows_the_monolithic_solution(fmu_dir, scheme, first, ratio):
    """10 g -- SpringDamper (c = 1e3 N/m, d = 250 N.s/m) -- 20 g, stretched 1 mm, both at 0.3 m/s: a
    slow relaxation of the stretch (d/c = 0.25 s) behind a fast inertial mode (mu/d = 2.7e-5 s, mu
    the reduced mass 6.7 g) that steps of 2.5 to 10 ms do not resolve. Against scipy's Radau
    solution (rtol 1e-12) of the two bodies' equations after the initial layer (t >= 0.05 s):
    measured position errors 4.1e-9, 1.0e-9, 2.6e-10 m (composite: ratio 4.0 per halving) and
    1.1e-5, 5.5e-6, 2.7e-6 m (backward Euler: ratio 2.0); the momentum stays to rounding."""
    m1, m2, c, d = 0.01, 0.02, 1e3, 250.0

    def rhs(t, y):
        f = c * (y[2] - y[0]) + d * (y[3] - y[1])
        return [y[1], f / m1, y[3], -f / m2]

    errors = []
    for h in (1e-2, 5e-3, 2.5e-3):
        r = run(chain(fmu_dir, m1, m2, c, d, 1e-3, 0.3, 0.3), 0.5, h, scheme)
        exact = solve_ivp(
            rhs,
            (0.0, 0.5),
            [0.0, 0.3, 1e-3, 0.3],
            method="Radau",
            rtol=1e-12,
            atol=1e-16,
            t_eval=r.time,
        )
        late = r.time >= 0.05
        errors.append(
            max(
                np.abs(r["a.s"] - exact.y[0])[late].max(),
                np.abs(r["b.s"] - exact.y[2])[late].max(),
            )
        )
        p = m1 * r["a.v"] + m2 * r["b.v"]
        assert np.abs(p - 0.009).max() < 1e-16
    assert errors[0] < first
    for coarse, fine in zip(errors, errors[1:]):
        assert coarse / fine > ratio
