"""EndStop's documented law (components/EndStop/law.py): parameters and their defaults, the continuous
friction law, the elastic forces, the states and their transitions, the documented results."""

import math

import pytest
from endstop_cases import BOTH, DETACH1, DETACH2, ELASTIC, FREE, STOP1, STOP2

from contactfmu.components.EndStop import law as endstop


def test_continuous_friction_law():
    p = endstop.Parameters(friction=True, kindF=1, Fst=10.0, Fsl=8.0, dvL=1e-3)
    assert endstop.continuous_friction(0.0, p) == 0.0
    assert endstop.continuous_friction(1e-3, p) == pytest.approx(10.0)  # static level at dvL
    assert endstop.continuous_friction(1.0, p) == pytest.approx(8.0, rel=1e-9)
    for dv in (1e-5, 4e-4, 2e-3, 0.3):
        assert endstop.continuous_friction(-dv, p) == -endstop.continuous_friction(dv, p)
    # Gevrey: exactly 0 and 1 at the ends of the transition; tanh only close to them
    assert endstop.smooth_step(0.0, p) == 0.0 and endstop.smooth_step(1.0, p) == 1.0
    p.kindTrans = 2
    assert 0.0 < endstop.smooth_step(0.0, p) < 1e-2 and 0.99 < endstop.smooth_step(1.0, p) < 1.0


def test_damper_piece_displacement_has_no_cancellation():
    """motion.Piece of a weak damper (the friction band of slope 1e-3 N.s/m, winf = 1e5
    m/s): x = x0 + w0*t + (g - k*w0)*t^2/2 - k*(g - k*w0)*t^3/6 to O((k t)^2); the form
    winf*t - (w0 - winf)*expm1(-k t)/k lost 1e-4 of the displacement here."""
    from contactfmu.mechanics.motion import Piece

    k, g, w0, t = 1e-3, 110.0, -1e-3, 1e-6
    x, w = Piece(0.0, w0, 1.0, g, 0.0, k).state(t)
    a0 = g - k * w0
    assert x == pytest.approx(w0 * t + a0 * t * t / 2 - k * a0 * t**3 / 6, rel=1e-13)
    assert w == pytest.approx(w0 + a0 * t - k * a0 * t * t / 2, rel=1e-13)


@pytest.mark.parametrize("start", [endstop.FREE, endstop.STOP1])
def test_elastic_transition_at_the_contact_point_moving_out_is_free(start):
    """At dx = l1 exactly with dv < 0 the documented transitions cycle (0 -> 1 as dx >= l1, 1 -> 0 as
    Fstop = b1*dv < 0): the state is free whichever state it starts from (the documentation: no
    drag force is ever transmitted; was: the 4-iteration cap decided, 1 from 1, 0 from 0)."""
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=0.01, l2=0.01, b1=100.0, b2=100.0)
    assert endstop.elastic_transition(start, 0.01, -1.0, p) == endstop.FREE
    mirrored = endstop.STOP2 if start == endstop.STOP1 else start
    assert endstop.elastic_transition(mirrored, -0.01, 1.0, p) == endstop.FREE
    assert endstop.elastic_transition(start, 0.01, 1.0, p) == endstop.STOP1  # moving in: contact


def test_parameter_defaults_are_the_documented_start_values():
    """Parameters() carries the start values of the README's EndStop parameter table."""
    p = endstop.Parameters()
    assert (p.l1, p.l2, p.mode, p.kind, p.ci) == (0.01, 0.01, 2, 3, 0.8)
    assert (p.k1, p.k2, p.b1, p.b2) == (1e6, 1e6, 100.0, 100.0)
    assert (p.friction, p.kindF, p.Fst, p.Fsl, p.dvL) == (False, 1, 10.0, 8.0, 1e-3)
    assert (p.eps_Fi, p.eps_dv, p.dFfrel, p.eps_dvsl, p.eps_dI) == (1e-6, 1e-4, 1e-3, 1e-6, 1e-8)
    assert (p.kindTrans, p.eps_sigma, p.eps_tau) == (1, 1.0, 0.1)


def test_elastic_transition_corners():
    """Module docstring's transitions at their boundaries: Fstop = 0 releases (<= 0 at stop 1, >= 0 at
    stop 2), 11 -> 0 only for dx < l1, 11 -> 1 only for dv > 0 (stop 2 mirrored), a small positive
    force keeps the contact, and a motion leaving the contact point free stays free."""
    T = endstop.elastic_transition
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=0.25, l2=0.5, k1=4.0, k2=4.0, b1=2.0, b2=2.0)
    assert T(STOP1, 0.5, -0.5, p) == DETACH1  # 4*0.25 - 2*0.5 = 0: released
    assert T(STOP1, 0.5, -0.25, p) == STOP1  # Fstop = 0.5 > 0
    assert T(STOP2, -0.75, 0.5, p) == DETACH2  # 4*(-0.25) + 2*0.5 = 0: released
    assert T(STOP2, -0.75, 0.25, p) == STOP2  # Fstop = -0.5 < 0
    assert T(DETACH1, 0.25, -0.5, p) == DETACH1  # at dx = l1: not yet passed
    assert T(DETACH1, 0.2, -0.5, p) == FREE
    assert T(DETACH1, 0.3, 0.0, p) == DETACH1  # dv = 0: not driven in again
    assert T(DETACH2, -0.5, 0.5, p) == DETACH2
    assert T(DETACH2, -0.45, 0.5, p) == FREE
    assert T(DETACH2, -0.6, 0.0, p) == DETACH2
    q = endstop.Parameters(mode=endstop.ELASTIC, l1=0.25, l2=0.5, k1=4.0, k2=4.0, b1=0.0, b2=0.0)
    assert T(DETACH2, -0.6, -0.5, q) == STOP2  # driven in again: Fstop = -0.4 < 0 holds
    assert T(FREE, 0.25, -0.5, p) == FREE  # leaving the contact point: no drag force
    assert T(FREE, -0.5, 0.5, p) == FREE
    # a negative l2 (stop 2 at dx = +0.01, l1 + l2 > 0): behind stop 2 when dx < 0.01
    r = endstop.Parameters(mode=endstop.ELASTIC, l1=0.05, l2=-0.01, k2=100.0, b2=10.0)
    assert T(STOP2, 0.0, 1.0, r) == DETACH2  # 100*0.01*(-1) + 10 > 0, dx < -l2
    assert T(DETACH2, 0.0, 1.0, r) == DETACH2
    assert T(DETACH2, 0.02, 1.0, r) == FREE


def test_settle_rigid_and_stick_slip_states():
    """Rigid preloaded element: both sides (3); rigid at a stop with stick-slip friction: dv = 0, so the
    friction is stuck (sf 0); otherwise sf follows the sign of dv, and at dv = 0 sticks while the force
    friction must hold, mu*g - Fstop, is within Fst (equality included), else slides along it."""
    S = endstop.settle
    rigid_pre = endstop.Parameters(mode=endstop.RIGID, l1=-0.02, l2=0.01)
    assert S(FREE, 0, 0.0, 0.0, 2.0, 1.0, rigid_pre) == (BOTH, 0)
    ss = dict(friction=True, kindF=endstop.STICK_SLIP, Fst=10.0, Fsl=8.0)
    rigid = endstop.Parameters(mode=endstop.RIGID, l1=0.01, l2=0.02, **ss)
    assert S(STOP1, 1, 0.01, 0.0, 2.0, 100.0, rigid) == (STOP1, 0)
    el = endstop.Parameters(**ELASTIC, **ss)
    assert S(STOP1, 0, 0.02, 0.5, 2.0, 0.0, el) == (STOP1, 1)
    assert S(FREE, 0, 0.0, -0.5, 2.0, 0.0, el) == (FREE, -1)
    assert S(FREE, 0, 0.0, 0.0, 2.0, 5.0, el) == (FREE, 0)  # |need| = 10 = Fst
    assert S(FREE, 0, 0.0, 0.0, 2.0, 5.5, el) == (FREE, 1)
    assert S(FREE, 0, 0.0, 0.0, 2.0, -5.5, el) == (FREE, -1)
    # at stop 1 (elastic) with dv = 0: Fstop = 100*(0.03 - 0.01) = 2 N; need = mu*g - 2
    assert S(STOP1, 0, 0.03, 0.0, 2.0, 5.5, el) == (STOP1, 0)  # need = 9
    assert S(STOP1, 0, 0.03, 0.0, 2.0, -4.5, el) == (STOP1, -1)  # need = -11
    small = endstop.Parameters(
        **ELASTIC, friction=True, kindF=endstop.STICK_SLIP, Fst=0.25, Fsl=0.2
    )
    assert S(FREE, 0, 0.0, 0.0, 1.0, 0.5, small) == (FREE, 1)
    # no friction: the friction state is left alone
    nof = endstop.Parameters(**ELASTIC, friction=False, kindF=endstop.STICK_SLIP)
    assert S(FREE, 0, 0.0, 0.5, 2.0, 0.0, nof) == (FREE, 0)


def test_elastic_transition_zero_backlash_at_rest_at_the_contact_point_is_free():
    # l1 = l2 = 0, dx = dv = 0: each stop transmits Fstop = 0, i.e. no force; the element is free
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=0.0, l2=0.0)
    for stop in (endstop.FREE, endstop.STOP1, endstop.STOP2):
        assert endstop.elastic_transition(stop, 0.0, 0.0, p) == endstop.FREE
    assert (
        endstop.elastic_transition(endstop.DETACH1, 0.0, 0.0, p) == endstop.DETACH1
    )  # neither dx < l1 nor dv > 0


@pytest.mark.parametrize(
    "dx, dv, want",
    [
        (0.0, -1.0, endstop.STOP2),
        (0.01, -1.0, endstop.STOP2),
        (0.005, 0.0, endstop.STOP2),
        (0.02, 1.0, endstop.FREE),
        (0.03, 1.0, endstop.STOP1),
    ],
)
def test_elastic_transition_with_a_negative_l2(dx, dv, want):
    # l1 = 0.03, l2 = -0.01 (backlash l1 + l2 = 0.02 >= 0): stop 2 is in contact for dx <= -l2 = 0.01
    p = endstop.Parameters(
        mode=endstop.ELASTIC, l1=0.03, l2=-0.01, k1=100.0, k2=100.0, b1=1.0, b2=1.0
    )
    assert endstop.elastic_transition(endstop.FREE, dx, dv, p) == want


def test_endstop_parameters_and_smooth_step():
    P = endstop.Parameters
    assert P(kind=endstop.PLASTIC, ci=0.7).restitution == 0.0
    assert P(kind=endstop.ELASTIC_IMPACT, ci=0.7).restitution == 1.0
    assert P(kind=endstop.BY_COEFFICIENT, ci=0.7).restitution == 0.7
    assert P(l1=-0.02, l2=0.01).preloaded and not P(l1=0.01, l2=-0.01).preloaded
    g = P(kindTrans=endstop.GEVREY, eps_sigma=1.3)
    assert endstop.smooth_step(-0.1, g) == 0.0 and endstop.smooth_step(0.0, g) == 0.0
    assert endstop.smooth_step(1.0, g) == 1.0 and endstop.smooth_step(1.2, g) == 1.0
    z = 0.3
    assert endstop.smooth_step(z, g) == pytest.approx(
        0.5 * (1 + math.tanh(1.3 * (z - 0.5) / (z * (1 - z))))
    )
    t = P(kindTrans=endstop.TANH, eps_tau=0.2)
    assert endstop.smooth_step(z, t) == pytest.approx(0.5 * (1 + math.tanh((z - 0.5) / 0.2)))
    assert endstop.smooth_step(1.5, t) == pytest.approx(0.5 * (1 + math.tanh(1.0 / 0.2)))


@pytest.mark.parametrize("kindTrans", [1, 2])
@pytest.mark.parametrize("dv", [0.0, 0.3e-3, -0.7e-3, 1e-3, 2.5e-3, -4e-3])
def test_endstop_continuous_friction_law_written_out(kindTrans, dv):
    Fst, Fsl, dvL = 10.0, 6.0, 1e-3
    p = endstop.Parameters(
        friction=True, Fst=Fst, Fsl=Fsl, dvL=dvL, kindTrans=kindTrans, eps_sigma=0.8, eps_tau=0.15
    )

    def step(z):
        if kindTrans == 2:
            return 0.5 * (1 + math.tanh((z - 0.5) / 0.15))
        return (
            0.0
            if z <= 0
            else 1.0
            if z >= 1
            else 0.5 * (1 + math.tanh(0.8 * (z - 0.5) / (z * (1 - z))))
        )

    u = abs(dv) / dvL
    level = Fst * (2 * step(0.5 * (u + 1)) - 1) if u <= 1 else Fsl + (Fst - Fsl) * math.exp(1 - u)
    expected = 0.0 if dv == 0 else math.copysign(level, dv)
    assert endstop.continuous_friction(dv, p) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    e = 1e-6 * dvL
    if dv != 0.0:
        assert endstop.continuous_friction_slope(dv, p) == pytest.approx(
            (endstop.continuous_friction(dv + e, p) - endstop.continuous_friction(dv - e, p))
            / (2 * e)
        )


def test_endstop_elastic_forces_and_states():
    p = endstop.Parameters(l1=0.01, l2=0.02, k1=100.0, k2=300.0, b1=2.0, b2=5.0)
    assert endstop.elastic_forces(endstop.STOP1, 0.03, 0.5, p) == pytest.approx(
        (100 * 0.02, 2 * 0.5)
    )
    assert endstop.elastic_forces(endstop.STOP1, 0.005, 0.5, p) == (0.0, 0.0)
    assert endstop.elastic_forces(endstop.STOP2, -0.05, -0.5, p) == pytest.approx(
        (300 * -0.03, 5 * -0.5)
    )
    assert endstop.elastic_forces(endstop.STOP2, 0.0, -0.5, p) == (0.0, 0.0)
    assert endstop.elastic_forces(endstop.FREE, 0.03, 0.5, p) == (0.0, 0.0)
    q = endstop.Parameters(l1=-0.02, l2=0.01, k1=100.0, k2=300.0, b1=2.0, b2=5.0)
    assert endstop.elastic_forces(endstop.BOTH, -0.015, 0.5, q) == pytest.approx(
        (100 * 0.005 - 300 * 0.005, 7 * 0.5)
    )
    assert endstop.both_state(-0.015, q) == endstop.BOTH
    assert endstop.both_state(0.0, q) == endstop.STOP1
    assert endstop.both_state(-0.05, q) == endstop.STOP2
    r = endstop.Parameters(l1=0.01, l2=0.01)
    assert endstop.both_state(0.0, r) == endstop.FREE
    T = endstop.elastic_transition
    assert T(endstop.FREE, 0.0, 1.0, p) == endstop.FREE
    assert T(endstop.FREE, 0.01, 1.0, p) == endstop.STOP1
    assert T(endstop.FREE, -0.02, -1.0, p) == endstop.STOP2
    assert T(endstop.STOP1, 0.011, -1.0, p) == endstop.DETACH1  # 100*0.001 - 2 < 0, still beyond l1
    assert T(endstop.STOP1, 0.011, 1.0, p) == endstop.STOP1
    assert T(endstop.STOP1, 0.005, -1.0, p) == endstop.FREE
    assert T(endstop.STOP2, -0.021, 1.0, p) == endstop.DETACH2
    assert T(endstop.STOP2, -0.021, -1.0, p) == endstop.STOP2
    assert T(endstop.DETACH1, 0.011, -1.0, p) == endstop.DETACH1
    assert T(endstop.DETACH1, 0.011, 0.5, p) == endstop.STOP1
    assert T(endstop.DETACH1, 0.009, 0.5, p) == endstop.FREE
    assert T(endstop.DETACH2, -0.021, 0.5, p) == endstop.DETACH2
    assert T(endstop.DETACH2, -0.021, -0.5, p) == endstop.STOP2
    assert T(endstop.STOP1, -0.015, 0.0, q) == endstop.BOTH
    assert endstop.transmits(endstop.STOP1, p) and not endstop.transmits(endstop.FREE, p)
    assert endstop.transmits(endstop.FREE, endstop.Parameters(friction=True))


def test_endstop_boundaries_stop_force_and_hold():
    q = endstop.Parameters(l1=-0.02, l2=0.01)
    assert endstop.both_state(-0.02, q) == endstop.BOTH  # dx >= l1 and dx <= -l2, at l1
    assert endstop.both_state(-0.01, q) == endstop.BOTH  # at -l2
    p = endstop.Parameters(
        mode=endstop.ELASTIC, l1=0.01, l2=0.02, k1=100.0, k2=300.0, b1=2.0, b2=5.0
    )
    # Fstop = Fs + Fd at either stop (documented); rigid: no elastic force
    assert endstop.stop_force(endstop.STOP1, 0.03, 0.5, p) == pytest.approx(100 * 0.02 + 2 * 0.5)
    assert endstop.stop_force(endstop.STOP2, -0.05, -0.5, p) == pytest.approx(
        300 * -0.03 + 5 * -0.5
    )
    assert endstop.stop_force(endstop.FREE, 0.03, 0.5, p) == 0.0
    r = endstop.Parameters(mode=endstop.RIGID, l1=0.01, l2=0.02)
    assert endstop.stop_force(endstop.STOP1, 0.03, 0.5, r) == 0.0
    # rigid separation exactly at the thresholds: leaves when Fi <= -eps_Fi (stop 1), Fi >= eps_Fi (stop 2)
    s = endstop.Parameters(mode=endstop.RIGID, eps_Fi=0.5)
    assert not endstop._rigid_hold(endstop.STOP1, 1.0, -0.5, s)
    assert not endstop._rigid_hold(endstop.STOP2, 1.0, 0.5, s)
    assert endstop._rigid_hold(endstop.BOTH, 1.0, 100.0, s) and endstop._rigid_hold(
        endstop.BOTH, 1.0, -100.0, s
    )
