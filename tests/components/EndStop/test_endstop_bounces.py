"""EndStop's bounce series (components/EndStop/bounces.py): the geometric bounces of a rigid stop and
the rattle between both stops, against bounce-by-bounce and leg-by-leg references written out here."""

import math

import pytest
from endstop_cases import STOP1, STOP2, assert_same, bounce_loop, close, rigid

from contactfmu.components.EndStop import bounces as endstop_bounces
from contactfmu.components.EndStop import law as endstop
from contactfmu.components.EndStop import prediction as endstop_prediction


def saturation(p, mu, g):
    """rattle_series docstring: continuous friction is Fsl to rounding above dvL*(1 + ln((Fst - Fsl)/(1e-17*
    max(Fsl, mu*|g|, 1e-300)))) (where the excess (Fst - Fsl)*exp(1 - |dv|/dvL) is 1e-17 of the forces)."""
    excess = abs(p.Fst - p.Fsl)
    scale = 1e-17 * max(p.Fsl, mu * abs(g), 1e-300)
    return p.dvL * (1.0 + math.log(excess / scale)) if excess > scale else p.dvL


def envelope(at, s, g, slide, ci, eps, span, mu=1.0, D=0.02):
    acc = accelerations(g, slide)
    return endstop_bounces._rattle_envelope(
        at, s, make_leg(acc, D), acc, D, ci, eps, mu, g, slide, span
    )


def cycles(at, s, m, g, slide, ci, mu=1.0, D=0.02):
    return cycles_one_by_one(at, s, m, accelerations(g, slide), D, ci, mu)


# exact decimal binary values: c2 = ci^2 = 1 - 2^-9 + 2^-20, slide = 1 - c2, g = 1 + c2: then
# ci^2*a12 + a21 = -2*c2 + 2*c2 = 0 exactly (no drift of E = s^2 toward a fixed point but the decay)
CI_EXACT = 1.0 - 2.0**-10


# (side, speed, a_away, a_back, ci, eps_dv, mu, distance, span): the series ends permanently,
# is cut by span, with eps_dv = 0, ci = 0, unequal accelerations (stick-slip friction), both sides
CASES = [
    (1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 10.0),  # permanent after 30 impacts
    (-1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 10.0),  # the same at stop 2
    (1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 0.5),  # cut by span
    (-1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 0.31),
    (1.0, 0.7, 9.81, 9.81, 0.8, 0.0, 2.0, 0.05, 0.5),  # eps_dv = 0, cut by span
    (1.0, 0.7, 9.81, 9.81, 0.8, 0.0, 2.0, 0.05, 0.65),
    (1.0, 0.7, 9.81, 9.81, 0.0, 1e-3, 2.0, 0.05, 1.0),  # plastic: one impact
    (-1.0, 0.7, 9.81, 9.81, 0.0, 0.0, 3.0, 0.05, 1.0),
    (1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 10.0),  # a_away > a_back (sliding friction)
    (-1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 0.4),
    (-1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 0.2),
    (1.0, 0.5, 12.0, 7.5, 0.9, 0.0, 0.5, 0.02, 0.2),
    (1.0, 0.3, 5.0, 6.0, 0.5, 1e-4, 1.5, 0.02, 10.0),  # a_back > a_away, r < 1
    (-1.0, 0.3, 5.0, 6.0, 0.5, 1e-4, 1.5, 0.02, 0.15),
    (
        1.0,
        2.0,
        100.0,
        100.0,
        0.3,
        0.5,
        1.0,
        1.0,
        10.0,
    ),  # 2 impacts: 2 -> 0.6 -> 0.18 <= 0.5? no: 0.6 > 0.5
    (1.0, 2.0, 100.0, 100.0, 0.3, 0.7, 1.0, 1.0, 10.0),  # the first rebound 0.6 <= 0.7: one impact
    (1.0, 1e-3, 9.81, 9.81, 0.6, 2e-4, 4.0, 0.01, 1.0),
    (1.0, 0.1, 0.5, 0.4, 0.7, 1e-3, 1.0, 0.05, 10.0),  # accelerations below 1
    (-1.0, 0.1, 0.5, 0.4, 0.7, 1e-3, 1.0, 0.05, 0.7),
]


S1, S2 = endstop.STOP1, endstop.STOP2


SIGN = {S1: 1.0, S2: -1.0}  # sign of the impulse of an impact at that stop (Fi > 0 at stop 1)


OTHER = {S1: S2, S2: S1}


def accelerations(g, slide):
    """Acceleration along the travel of the leg leaving each stop: stop 1 is at dx = l1 (upper),
    so a leg leaving it moves towards -x, where g counts negative."""
    return {S1: -g - slide, S2: g - slide}


def make_leg(accel, distance):
    """(duration, arrival speed) of a leg of constant acceleration a over the distance D leaving at
    speed s: s1^2 = s^2 + 2*a*D, duration = D/mean speed; None if it turns back before arriving."""

    def leg(at, s):
        e = s * s + 2.0 * accel[at] * distance
        if e <= 0.0:
            return None
        s1 = math.sqrt(e)
        return 2.0 * distance / (s + s1), s1

    return leg


def cycles_one_by_one(at, s, m, accel, distance, ci, mu):
    """m cycles (out of `at` and back) impact by impact: (duration, time out, speed, impulse)."""
    leg = make_leg(accel, distance)
    t = t_out = impulse = 0.0
    for _ in range(m):
        d1, s1 = leg(at, s)
        impulse += SIGN[OTHER[at]] * mu * (1.0 + ci) * s1
        d2, s2 = leg(OTHER[at], ci * s1)
        impulse += SIGN[at] * mu * (1.0 + ci) * s2
        t += d1 + d2
        t_out += d1
        s = ci * s2
    return t, t_out, s, impulse


def rattle_one_by_one(side, u, mu, g, ci, eps, distance, slide, span, max_legs=10**7):
    """The rattle followed leg by leg: (t, stop, w, impulse, impacts, permanent) or None."""
    accel = accelerations(g, slide)
    leg = make_leg(accel, distance)
    t, impulse, impacts, at, s = 0.0, 0.0, 0, side, abs(u)
    for _ in range(max_legs):
        step = leg(at, s)
        if step is None or t + step[0] > span:
            break
        t += step[0]
        at = OTHER[at]
        impacts += 1
        after = ci * step[1]
        if after <= eps:
            return t, at, 0.0, impulse + SIGN[at] * mu * step[1], impacts, True
        impulse += SIGN[at] * mu * (step[1] + after)
        s = after
    if impacts == 0:
        return None
    return t, at, (-s if at == S1 else s), impulse, impacts, False


def test_rattle_needs_a_motion_leaving_toward_the_other_stop():
    """rattle_series docstring: None if not leaving toward the other stop (u >= 0 at stop 1, u <= 0 at stop
    2, dx = l1 being the upper stop); a leg leaving stop 2 upward with 0.5 m/s arrives after D/0.5."""
    p = rigid(ci=0.5)
    assert endstop_bounces.rattle_series(STOP1, 0.0, 1.0, 0.0, p, 1.0) is None
    assert endstop_bounces.rattle_series(STOP1, 0.5, 1.0, 0.0, p, 1.0) is None
    assert endstop_bounces.rattle_series(STOP2, 0.0, 1.0, 0.0, p, 1.0) is None
    got = endstop_bounces.rattle_series(STOP2, 0.5, 1.0, 0.0, p, 0.05)
    assert got[:2] == (pytest.approx(0.04, rel=1e-12), STOP1) and got[2] == pytest.approx(
        -0.25, rel=1e-12
    )
    assert got[3:] == (
        pytest.approx(0.75, rel=1e-12),
        1,
        False,
    )  # impulse mu*(0.5 + 0.25) at stop 1 (> 0)


@pytest.mark.parametrize("u", [-1.5, -2.0])
def test_rattle_leg_that_turns_back_before_the_other_stop_is_none(u):
    """Leaving stop 1 at s against a*D with s^2 <= 2*|a|*D (1.5^2 < 2*8*0.25 < 2*1.5^2; 2^2 = 2*8*0.25
    exactly: the apex just touches stop 2 without an impact speed): no leg arrives, no rattle."""
    p = rigid(l1=0.125, l2=0.125)
    assert endstop_bounces.rattle_series(STOP1, u, 1.0, 8.0, p, 10.0) is None


def test_rattle_from_rest_at_a_tiny_speed_falls_to_the_other_stop():
    """Leaving stop 1 at 1e-200 m/s with 10 m/s^2 toward stop 2 (g = -10): free fall over D, arrival
    speed sqrt(2*a*D) after sqrt(2*D/a); the rebound ci*sqrt(2aD) then turns back before stop 1."""
    p = rigid(ci=0.5)
    a, D = 10.0, 0.02
    got = endstop_bounces.rattle_series(STOP1, -1e-200, 2.0, -a, p, 0.1)
    v = math.sqrt(2 * a * D)
    assert got[0] == pytest.approx(math.sqrt(2 * D / a), rel=1e-12)
    assert got[1:3] == (STOP2, pytest.approx(0.5 * v, rel=1e-12))
    assert got[3] == pytest.approx(-2.0 * 1.5 * v, rel=1e-12) and got[4:] == (1, False)


@pytest.mark.parametrize(
    "Fst, Fsl, mu, g", [(10.0, 8.0, 1e4, 0.0), (10.0, 8.0, 1e6, 1e-4), (8.0, 8.0, 1e8, 0.0)]
)
def test_rattle_with_continuous_friction_only_above_its_saturation_speed(Fst, Fsl, mu, g):
    """A leg leaving at 1.01x the saturation speed (and arriving above it) is followed with the sliding
    level Fsl (arrival speed sqrt(s^2 - 2*(Fsl/mu + g)*D)); at 0.99x it is not (None)."""
    p = rigid(
        l1=0.001, l2=0.001, friction=True, kindF=endstop.CONTINUOUS, Fst=Fst, Fsl=Fsl, dvL=1e-3
    )
    v = saturation(p, mu, g)
    D = 0.002
    s = 1.01 * v
    s1 = math.sqrt(s * s - 2 * (Fsl / mu + g) * D)
    assert s1 > v
    got = endstop_bounces.rattle_series(STOP1, -s, mu, g, p, 2 * D / (s + s1) * (1 + 1e-9))
    assert got is not None and got[1] == STOP2 and got[2] == pytest.approx(0.9 * s1, rel=1e-12)
    assert endstop_bounces.rattle_series(STOP1, -0.99 * v, mu, g, p, 1.0) is None


def test_rattle_with_continuous_friction_and_no_other_force_is_never_followed():
    """Fsl = 0 and g = 0: the friction's excess Fst*exp(1 - |dv|/dvL) is never below rounding of forces
    that are all 0 (saturation speed ln(Fst/1e-317) -> inf): no leg is followed, even at 1 m/s."""
    p = rigid(friction=True, kindF=endstop.CONTINUOUS, Fst=10.0, Fsl=0.0, dvL=1e-3)
    assert endstop_bounces.rattle_series(STOP1, -1.0, 1.0, 0.0, p, 1.0) is None


@pytest.mark.parametrize(
    "friction, kindF", [(False, endstop.CONTINUOUS), (True, endstop.STICK_SLIP)]
)
def test_rattle_at_low_speed_without_continuous_friction_is_followed(friction, kindF):
    """Without friction or with stick-slip (Fsl = 1e-3 N sliding), a slow rattle (1 cm/s, far below any
    continuous-friction saturation speed) is followed: arrival speed sqrt(s^2 - 2*Fsl/mu*D)."""
    p = rigid(friction=friction, kindF=kindF, Fst=10.0, Fsl=1e-3)
    s, D, mu = 0.01, 0.02, 1.0
    slide = 1e-3 / mu if friction else 0.0
    s1 = math.sqrt(s * s - 2 * slide * D)
    got = endstop_bounces.rattle_series(STOP1, -s, mu, 0.0, p, 2 * D / (s + s1) * (1 + 1e-9))
    assert got[:3] == (
        pytest.approx(2 * D / (s + s1), rel=1e-12),
        STOP2,
        pytest.approx(0.9 * s1, rel=1e-12),
    )


def test_rattle_leg_ending_exactly_at_span_is_within_it_and_eps_dv_equality_is_permanent():
    """D = 0.25 at 0.5 m/s (g = 0): the leg takes 0.5 s, ending at span = 0.5 ('within span');
    ci*0.5 = 0.25 = eps_dv: permanent contact at stop 2 (|dv'| <= eps_dv), impulse of a plastic impact
    -mu*0.5 (mu = 2)."""
    p = rigid(ci=0.5, l1=0.125, l2=0.125, eps_dv=0.25)
    got = endstop_bounces.rattle_series(STOP1, -0.5, 2.0, 0.0, p, 0.5)
    assert got == (0.5, STOP2, 0.0, -1.0, 1, True)


def test_rattle_legs_shorter_than_the_smallest_float_are_not_followed():
    """rattle_series docstring: a leg whose duration rounds to 0 (D = 1e-20 m at 1.7e308 m/s) is not followed."""
    p = rigid(l1=5e-21, l2=5e-21)
    assert endstop_bounces.rattle_series(STOP1, -1.7e308, 1.0, 0.0, p, 1.0) is None


def test_rattle_of_12000_legs_under_held_acceleration_is_followed_leg_by_leg():
    """rattle_series docstring: the first RATTLE_EXACT (20000) legs are followed one by one, exact to rounding:
    12000 legs under g = 30 with ci = 0.99999 against the rattle written out leg by leg (constant
    acceleration per leg: s1^2 = s^2 + 2*a*D, duration 2*D/(s + s1), rebound ci*s1)."""
    ci, g, mu, u = 0.99999, 30.0, 2.0, -2.0
    p = rigid(ci=ci)
    ref = rattle_one_by_one(STOP1, u, mu, g, ci, 1e-4, 0.02, 0.0, 1e9, max_legs=12000)
    span = ref[0] * (1 + 1e-12)
    got = endstop_bounces.rattle_series(STOP1, u, mu, g, p, span)
    assert got[4] == ref[4] == 12000 and got[1] == ref[1] and not got[5]
    assert got[0] == pytest.approx(ref[0], rel=1e-10)
    assert got[2] == pytest.approx(ref[2], rel=1e-9)
    assert got[3] == pytest.approx(ref[3], rel=1e-9)


def test_rattle_envelope_is_none_without_a_complete_cycle():
    """None when the first leg does not arrive (1 m/s against 100 m/s^2 over 2 cm) and for a plastic
    rattle (ci = 0: no rebound to leave with, though a 30 m/s^2 pull would bring it back)."""
    D = 0.02
    acc = accelerations(100.0, 0.0)
    assert (
        endstop_bounces._rattle_envelope(
            STOP1, 1.0, make_leg(acc, D), acc, D, 0.9, 1e-4, 1.0, 100.0, 0.0, 10.0
        )
        is None
    )
    acc = accelerations(30.0, 0.0)
    assert (
        endstop_bounces._rattle_envelope(
            STOP1, 3.0, make_leg(acc, D), acc, D, 0.0, 1e-4, 1.0, 30.0, 0.0, 10.0
        )
        is None
    )


def test_rattle_envelope_fast_plastic_rattle_is_none():
    """ci = 0 (a fast rattle, |a|*D far below 1e-17*s^2, whose back leg would arrive from rest): no
    rebound, no rattle."""
    assert envelope(STOP1, 1000.0, 1e-10, 0.0, 0.0, 1e-4, 10.0) is None


@pytest.mark.parametrize("cycles_in_span, m", [(50.5, 49), (2.5, 1)])
def test_rattle_envelope_uniform_elastic_rattle_skips_all_whole_cycles_but_one(cycles_in_span, m):
    """ci = 1, g = 0: every cycle takes 2*D/s; whole cycles up to one before span: floor(span/T) - 1."""
    s, D = 40.0, 0.02
    T = 2 * D / s
    dt, sm, impulse, got_m = envelope(STOP1, s, 0.0, 0.0, 1.0, 1e-4, cycles_in_span * T)
    assert got_m == m and sm == s and dt == pytest.approx(m * T, rel=1e-12)


def test_rattle_envelope_fast_rattle_stays_fast_and_above_eps_dv():
    """Fast damped rattle (ci = 0.9, g = 1e-10): the skip ends with the speed still 'fast' (|a|*D <=
    1e-17*s^2, s >= sqrt(2e5) m/s), the last cycle it could take: s*r^(m+1) >= floor > s*r^(m+2) (r = ci^2);
    with eps_dv = 0 and no force only span limits it; a speed already within eps_dv: no skip."""
    s, g, ci, D = 1e4, 1e-10, 0.9, 0.02
    r = ci * ci
    floor = math.sqrt(g * D * 1e17)
    dt, sm, impulse, m = envelope(STOP1, s, g, 0.0, ci, 1e-4, 1e6)
    assert sm == pytest.approx(s * r**m, rel=1e-12)
    assert s * r ** (m + 1) >= floor > s * r ** (m + 2)
    span = 0.05
    dt, sm, impulse, m = envelope(STOP1, 10.0, 0.0, 0.0, ci, 0.0, span)
    T = [
        2 * D / (10.0 * r**j) * (1 + 1 / ci) / 2 for j in range(m + 2)
    ]  # cycle j: D/s_j + D/(ci*s_j)
    assert sum(T[: m + 1]) <= span * (1 + 1e-12) < sum(T[: m + 2])
    assert dt == pytest.approx(sum(T[:m]), rel=1e-12)
    assert envelope(STOP1, 0.5, 0.0, 0.0, ci, 1.0, 10.0) is None


def test_rattle_envelope_fast_elastic_rattle_with_tiny_friction_has_no_net_impulse():
    """ci = 1, g = 0, Fsl/mu = 1e-9 (fast): the impacts return the speed every cycle, the friction's
    impulse over the skipped time is at most mu*slide*dt (momentum balance): |J| <= 1e-9*dt."""
    dt, sm, impulse, m = envelope(STOP1, 1e4, 0.0, 1e-9, 1.0, 1e-4, 1.0)
    assert m > 100 and abs(impulse) <= 1e-9 * dt * 1.01 + 1e-12


def test_rattle_envelope_periodic_rattle_span_of_exactly_four_periods():
    """ci = 1, g = 30 (E unchanged per cycle): span = 4 periods exactly holds 3 skipped + 1 more."""
    T = cycles(STOP1, 2.0, 1, 30.0, 0.0, 1.0)[0]
    dt, sm, impulse, m = envelope(STOP1, 2.0, 30.0, 0.0, 1.0, 1e-4, 4 * T)
    assert m == 3 and dt == pytest.approx(3 * T, rel=1e-12)


def test_rattle_envelope_slow_rattle_with_span_for_two_cycles_skips_one():
    """Slow rattle (ci = 0.9999, g = 40): span for 2.5 cycles: one cycle skipped (one more fits)."""
    T = cycles(STOP1, 3.0, 1, 40.0, 0.0, 0.9999)[0]
    dt, sm, impulse, m = envelope(STOP1, 3.0, 40.0, 0.0, 0.9999, 1e-4, 2.5 * T)
    assert m == 1 and sm == pytest.approx(cycles(STOP1, 3.0, 1, 40.0, 0.0, 0.9999)[2], rel=1e-12)


def test_rattle_envelope_slow_rattle_stops_before_the_rebound_reaches_eps_dv():
    """eps_dv just below the first rebound (0.995*ci*s): the skip keeps every rebound above it."""
    ci, s = 0.9999, 3.0
    eps = 0.995 * ci * s
    got = envelope(STOP1, s, 40.0, 0.0, ci, eps, 10.0)
    assert got is not None
    dt, sm, impulse, m = got
    assert ci * sm > eps and sm == pytest.approx(cycles(STOP1, s, m, 40.0, 0.0, ci)[2], rel=1e-9)


@pytest.mark.parametrize(
    "ci, g, slide, s",
    [
        (0.9999, 40.0, 0.0, 3.0),
        (0.99999, -25.0, 0.0, 2.0),
        (0.9999, 10.0, 0.05, 3.0),
        (CI_EXACT, 1.0 + CI_EXACT**2, 1.0 - CI_EXACT**2, 2.0),
    ],
)
def test_rattle_envelope_chunk_is_the_largest_within_the_energy_step(ci, g, slide, s):
    """_rattle_envelope docstring: chunks of as many cycles as change E = s^2 by at most RATTLE_STEP
    (span not limiting): |E_m/E_0 - 1| <= 0.02 < |E_(m+1)/E_0 - 1|, E_j from the cycles one by one."""
    got = envelope(STOP1, s, g, slide, ci, 1e-6, 100.0)
    assert got is not None
    dt, sm, impulse, m = got
    e = [cycles(STOP1, s, j, g, slide, ci)[2] ** 2 / s**2 for j in (m, m + 1)]
    assert abs(e[0] - 1) <= endstop_bounces.RATTLE_STEP * (1 + 1e-9) < abs(e[1] - 1)
    assert sm == pytest.approx(math.sqrt(e[0]) * s, rel=1e-9)


@pytest.mark.parametrize("s, g, fast", [(1e200, 30.0, True), (1e155, 1e300, False)])
def test_rattle_envelope_fast_or_slow_at_huge_speeds(s, g, fast):
    """Docstring: fast where |a|*D <= 1e-17*s^2 (checked as |a|*D/s^2 beyond 1e150 m/s): then the
    cycles are the geometric series (speed s*ci^(2m)); else (ci = 0.9: a cycle changes E by 34 % >
    RATTLE_STEP) no chunk. The legs in closed form scaled by s (s^2 overflows)."""
    D, ci = 0.02, 0.9
    acc = accelerations(g, 0.0)

    def leg(at, v):
        r = 2.0 * acc[at] * D / v / v
        if not 1.0 + r > 0.0:
            return None
        v1 = v * math.sqrt(1.0 + r)
        return (D / v) * (2.0 / (1.0 + v1 / v)), v1

    got = endstop_bounces._rattle_envelope(STOP1, s, leg, acc, D, ci, 1e-4, 1.0, g, 0.0, 1.0)
    if fast:
        dt, sm, impulse, m = got
        assert m >= 1 and sm == pytest.approx(s * ci ** (2 * m), rel=1e-12)
    else:
        assert got is None


@pytest.mark.parametrize("span", [10.0, 6.0])
def test_rattle_envelope_momentum_with_sliding_friction(span):
    """A rigid rattle with sliding friction (stick-slip, Fsl = 0.5 N) past RATTLE_EXACT legs (39571 legs
    in 10 s from 100 m/s, ci = 0.99999, g = 3 m/s2): after the envelope, the impulses minus mu*g*dt
    (the momentum balance without the held force, which removes the envelope's Simpson error in dt)
    equal those of the same number of legs followed one by one in closed form here (arrival speed
    sqrt(s^2 + 2*a*D), leg time 2*D/(s + s')), to 1e-8 (measured 3e-10; the friction's share of
    it is 1.3e-4), the legs end within span, and the speed is the one of the legs to 1e-12."""
    p = endstop.Parameters(
        mode=endstop.RIGID,
        l1=0.01,
        l2=0.01,
        ci=0.99999,
        friction=True,
        kindF=endstop.STICK_SLIP,
        Fst=1.0,
        Fsl=0.5,
        eps_dv=0.0,
    )
    mu, g = 1.0, 3.0
    dt, side, w, J, n, permanent = endstop_bounces.rattle_series(
        endstop.STOP1, -100.0, mu, g, p, span
    )
    assert not permanent and n > endstop_bounces.RATTLE_EXACT and dt <= span
    D, slide = p.l1 + p.l2, p.Fsl / mu
    along = {
        endstop.STOP1: -g - slide,
        endstop.STOP2: g - slide,
    }  # acceleration along the leg leaving that stop
    t, at, s, impulses = 0.0, endstop.STOP1, 100.0, 0.0
    for _ in range(n):
        s1 = math.sqrt(s * s + 2.0 * along[at] * D)
        t += 2.0 * D / (s + s1)
        at = endstop.STOP2 if at == endstop.STOP1 else endstop.STOP1
        impulses += (1.0 if at == endstop.STOP1 else -1.0) * mu * (1.0 + p.ci) * s1
        s = p.ci * s1
    assert side == at and abs(w) == pytest.approx(s, rel=1e-12)
    assert J - mu * g * dt == pytest.approx(impulses - mu * g * t, abs=1e-8 * abs(impulses))


@pytest.mark.parametrize("case", CASES)
def test_geometric_bounces_match_the_bounce_by_bounce_kinematics(case):
    got = endstop_bounces.geometric_bounces(*case)
    want = bounce_loop(*case)
    assert want is not None
    # measured relative error of dt, w, impulse: <= 2e-15 (the loop accumulates rounding)
    assert_same(got, want, rel=1e-13)


def test_geometric_bounces_counts_the_documented_bounces():
    # written out: speed 2, g = 100, ci = 0.3: rebounds 0.6, 0.18, 0.054 (<= eps_dv = 0.1: plastic)
    got = endstop_bounces.geometric_bounces(1.0, 2.0, 100.0, 100.0, 0.3, 0.1, 1.0, 1.0, 10.0)
    dt = 2 * (2.0 + 0.6 + 0.18) / 100.0
    J = 1.0 * ((2.0 + 0.6) + (0.6 + 0.18) + 0.18)
    assert got[3] == 3 and got[4] is True and got[1] == 0.0
    assert close(got[0], dt, 1e-14) and close(got[2], J, 1e-14)  # measured 1e-16


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_geometric_bounces_eps_dv_zero_sums_to_the_accumulation_point(side):
    speed, g, ci, mu = 0.7, 9.81, 0.5, 2.0
    got = endstop_bounces.geometric_bounces(side, speed, g, g, ci, 0.0, mu, 0.05, 10.0)
    want = bounce_loop(side, speed, g, g, ci, 0.0, mu, 0.05, 10.0)
    # the loop stops when the rebound underflows to 0 (~1075 impacts), the series counts infinitely
    # many as 1e9; dt, impulse: measured 2e-16
    assert_same(got, want, rel=1e-13, impacts=10**9)
    assert close(got[0], 2 * speed / g / (1 - ci), 1e-14)
    assert close(got[2], side * mu * (1 + ci) * speed / (1 - ci), 1e-14)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("periods", [1.0, 1.5, 7.5, 7.999])
def test_geometric_bounces_elastic_repeats_whole_periods(side, periods):
    speed, g, mu = 0.4, 9.81, 3.0
    period = 2 * speed / g
    span = periods * period
    got = endstop_bounces.geometric_bounces(side, speed, g, g, 1.0, 1e-3, mu, 0.05, span)
    m = int(periods)
    assert got[3] == m and got[4] is False
    assert close(got[0], m * period, 1e-14)  # measured 0
    assert got[1] == -side * speed
    assert close(got[2], side * mu * 2 * speed * m, 1e-14)
    assert_same(got, bounce_loop(side, speed, g, g, 1.0, 1e-3, mu, 0.05, span), rel=1e-13)


def test_geometric_bounces_elastic_shorter_than_a_period_is_none():
    speed, g = 0.4, 9.81
    assert (
        endstop_bounces.geometric_bounces(
            1.0, speed, g, g, 1.0, 1e-3, 1.0, 0.05, 0.99 * 2 * speed / g
        )
        is None
    )
    assert endstop_bounces.geometric_bounces(1.0, speed, g, g, 1.0, 1e-3, 1.0, 0.05, 0.0) is None


@pytest.mark.parametrize("ci", [0.0, 0.5, 0.8])
def test_geometric_bounces_first_cycle_longer_than_span_is_none(ci):
    speed, g = 0.7, 9.81
    first = 2 * speed / g
    assert (
        endstop_bounces.geometric_bounces(1.0, speed, g, g, ci, 1e-3, 1.0, 0.05, 0.999 * first)
        is None
    )
    assert (
        endstop_bounces.geometric_bounces(-1.0, speed, g, g, ci, 0.0, 1.0, 0.05, 0.5 * first)
        is None
    )
    got = endstop_bounces.geometric_bounces(1.0, speed, g, g, ci, 1e-3, 1.0, 0.05, 1.001 * first)
    assert got is not None and got[3] == 1


def test_geometric_bounces_apex_reaching_the_other_stop_is_none():
    # apex speed^2/(2*a_away) = 2^2/8 = 0.5 exactly: reaching the other stop at distance 0.5
    assert endstop_bounces.geometric_bounces(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5, 10.0) is None
    assert endstop_bounces.geometric_bounces(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.4, 10.0) is None
    got = endstop_bounces.geometric_bounces(
        1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5 * (1 + 1e-12), 10.0
    )
    assert_same(
        got, bounce_loop(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5 * (1 + 1e-12), 10.0), rel=1e-13
    )
    # a_back does not enter the apex: a large a_back with the same a_away still reaches it
    assert endstop_bounces.geometric_bounces(1.0, 2.0, 4.0, 40.0, 0.1, 1e-3, 1.0, 0.5, 10.0) is None
    got = endstop_bounces.geometric_bounces(1.0, 2.0, 4.0, 1.0, 0.5, 1e-3, 1.0, 0.6, 10.0)
    assert_same(got, bounce_loop(1.0, 2.0, 4.0, 1.0, 0.5, 1e-3, 1.0, 0.6, 10.0), rel=1e-13)


@pytest.mark.parametrize(
    "a_away, a_back",
    [
        (0.0, 9.81),
        (9.81, 0.0),
        (-1.0, 9.81),
        (9.81, -1.0),
        (math.inf, 9.81),
        (9.81, math.inf),
        (math.inf, math.inf),
        (math.nan, 9.81),
        (9.81, math.nan),
    ],
)
def test_geometric_bounces_without_positive_finite_accelerations_is_none(a_away, a_back):
    assert (
        endstop_bounces.geometric_bounces(1.0, 0.5, a_away, a_back, 0.8, 1e-3, 1.0, 0.05, 10.0)
        is None
    )
    assert (
        endstop_bounces.geometric_bounces(-1.0, 0.5, a_away, a_back, 0.8, 1e-3, 1.0, 0.05, 10.0)
        is None
    )


def test_geometric_bounces_growing_series_is_none():
    # a_back = 4*a_away, ci = 0.75: r = 1.5, every bounce higher than the last
    assert endstop_bounces.geometric_bounces(1.0, 0.1, 1.0, 4.0, 0.75, 1e-3, 1.0, 1.0, 0.3) is None
    assert endstop_bounces.geometric_bounces(1.0, 0.1, 1.0, 4.0, 0.75, 1e-3, 1.0, 1.0, 10.0) is None


def test_geometric_bounces_rebound_exactly_eps_dv_is_permanent():
    # ci = 0.5, a_away = a_back: rebounds 1, 0.5, 0.25 exactly; eps_dv = 0.25 ends at the 3rd impact
    got = endstop_bounces.geometric_bounces(1.0, 1.0, 10.0, 10.0, 0.5, 0.25, 1.0, 1.0, 10.0)
    want = bounce_loop(1.0, 1.0, 10.0, 10.0, 0.5, 0.25, 1.0, 1.0, 10.0)
    assert want[3] == 2 and want[4]
    assert_same(got, want, rel=1e-14)


def test_geometric_bounces_speed_at_or_below_eps_dv_is_one_plastic_impact():
    got = endstop_bounces.geometric_bounces(1.0, 0.01, 10.0, 10.0, 0.5, 0.01, 2.0, 1.0, 10.0)
    assert_same(got, bounce_loop(1.0, 0.01, 10.0, 10.0, 0.5, 0.01, 2.0, 1.0, 10.0), rel=1e-14)
    got = endstop_bounces.geometric_bounces(-1.0, 0.01, 10.0, 10.0, 0.5, 0.02, 2.0, 1.0, 10.0)
    want = bounce_loop(-1.0, 0.01, 10.0, 10.0, 0.5, 0.02, 2.0, 1.0, 10.0)
    assert want[3] == 1
    assert_same(got, want, rel=1e-14)


@pytest.mark.parametrize("a", [0.5, 2.0, 8.0])
@pytest.mark.parametrize("eps_dv", [0.0, 1e-3])
def test_geometric_bounces_span_two_floats_short_of_a_cycle_end(a, eps_dv):
    # speed 1, a_away = a_back = a, ci = 0.75: the flights 2/a, 1.5/a, ... and their ends are exact
    # binary fractions; a span two floats short of a cycle's end does not contain that cycle (the
    # series' cycle time speed*tau, tau = 1/a + 1/(sqrt(a)*sqrt(a)), is off by up to one float)
    first, second = 2.0 / a, 2.0 / a + 1.5 / a

    def short(t):
        return math.nextafter(math.nextafter(t, 0.0), 0.0)

    assert (
        endstop_bounces.geometric_bounces(1.0, 1.0, a, a, 0.75, eps_dv, 1.0, 10.0, short(first))
        is None
    )
    got = endstop_bounces.geometric_bounces(-1.0, 1.0, a, a, 0.75, eps_dv, 2.0, 10.0, short(second))
    assert_same(got, (first, 0.75, -2.0 * 1.75, 1, False), rel=1e-15)  # exact: measured 0
    got = endstop_bounces.geometric_bounces(1.0, 1.0, a, a, 0.75, eps_dv, 2.0, 10.0, second)
    assert got[3] in (1, 2)  # a cycle ending at span: rounding decides


@pytest.mark.parametrize("k", [1, 2, 5, 17])
def test_geometric_bounces_span_just_after_the_kth_cycle(k):
    speed, g, ci = 0.7, 9.81, 0.8
    ends = [0.0]
    s = speed
    for _ in range(k + 1):
        ends.append(ends[-1] + 2 * s / g)
        s *= ci
    for span in (ends[k] * (1 + 1e-9), 0.5 * (ends[k] + ends[k + 1]), ends[k + 1] * (1 - 1e-9)):
        for eps in (0.0, 1e-6):
            got = endstop_bounces.geometric_bounces(1.0, speed, g, g, ci, eps, 1.0, 0.05, span)
            want = bounce_loop(1.0, speed, g, g, ci, eps, 1.0, 0.05, span)
            assert want[3] == k
            assert_same(got, want, rel=1e-13)


@pytest.mark.parametrize("at", [S1, S2])
@pytest.mark.parametrize("ci", [0.9, 1.0])
def test_rattle_envelope_without_other_forces_is_the_geometric_series(at, ci):
    """g = 0, no friction: every leg is a uniform motion; whole cycles up to one before span."""
    distance, mu, s, eps = 0.02, 1.5, 40.0, 1e-4
    accel = accelerations(0.0, 0.0)
    span = 0.05
    dt, sm, impulse, m = endstop_bounces._rattle_envelope(
        at, s, make_leg(accel, distance), accel, distance, ci, eps, mu, 0.0, 0.0, span
    )
    t_ref, _, s_ref, j_ref = cycles_one_by_one(at, s, m, accel, distance, ci, mu)
    assert m >= 1
    assert dt == pytest.approx(t_ref, rel=1e-12)
    assert sm == pytest.approx(s_ref, rel=1e-12)
    assert impulse == pytest.approx(j_ref, rel=1e-9, abs=1e-9 * mu * s)
    # the largest m whose next cycle still ends within span
    assert cycles_one_by_one(at, s, m + 1, accel, distance, ci, mu)[0] <= span * (1 + 1e-12)
    assert cycles_one_by_one(at, s, m + 2, accel, distance, ci, mu)[0] > span


def test_rattle_envelope_fast_rattle_stops_above_eps_dv():
    """A damped uniform rattle: the skipped cycles never bring the speed to eps_dv."""
    distance, mu, s, ci, eps = 0.02, 1.0, 10.0, 0.9, 1.0
    accel = accelerations(0.0, 0.0)
    dt, sm, impulse, m = endstop_bounces._rattle_envelope(
        S1, s, make_leg(accel, distance), accel, distance, ci, eps, mu, 0.0, 0.0, 1e6
    )
    # speeds leaving stop 1: s*ci^(2j); the skip ends one cycle before the speed would reach eps
    assert sm == pytest.approx(s * ci ** (2 * m), rel=1e-12)
    assert s * ci ** (2 * (m + 1)) >= eps * (1 - 1e-12)
    assert s * ci ** (2 * (m + 3)) < eps
    assert dt == pytest.approx(cycles_one_by_one(S1, s, m, accel, distance, ci, mu)[0], rel=1e-12)
    # a plastic rattle (ci = 0) is no rattle
    assert (
        endstop_bounces._rattle_envelope(
            S1, s, make_leg(accel, distance), accel, distance, 0.0, eps, mu, 0.0, 0.0, 1.0
        )
        is None
    )
    # no complete cycle within span
    assert (
        endstop_bounces._rattle_envelope(
            S1, s, make_leg(accel, distance), accel, distance, ci, 1e-4, mu, 0.0, 0.0, 1e-3
        )
        is None
    )


@pytest.mark.parametrize("at", [S1, S2])
@pytest.mark.parametrize(
    "ci, g, slide, s",
    [
        (0.9999, 40.0, 0.0, 3.0),
        (0.99999, -25.0, 0.0, 2.0),
        (1.0, 30.0, 0.0, 2.0),
        (1.0, 0.0, 0.05, 3.0),
        (0.9999, 10.0, 0.05, 3.0),
    ],
)
def test_rattle_envelope_under_held_acceleration_follows_the_speed_map(at, ci, g, slide, s):
    """Slow rattles (g or sliding friction change a leg's speed): the speed after m cycles is the
    affine map of E = s^2 iterated exactly, the duration within Simpson's error, the impulse the
    sum of the impacts, and E changes by at most RATTLE_STEP per skip."""
    distance, mu, eps = 0.02, 2.0, 1e-4
    accel = accelerations(g, slide)
    span = 10.0
    got = endstop_bounces._rattle_envelope(
        at, s, make_leg(accel, distance), accel, distance, ci, eps, mu, g, slide, span
    )
    dt, sm, impulse, m = got
    t_ref, t_out_ref, s_ref, j_ref = cycles_one_by_one(at, s, m, accel, distance, ci, mu)
    assert m >= 1
    assert sm == pytest.approx(s_ref, rel=1e-9)
    # Simpson's rule over the first, middle and last cycle integrates the cycle time T(j) over
    # 0 <= j <= m: the sum over the m cycles plus (T(m) - T(0))/2 (Euler-Maclaurin; the bias
    # telescopes over consecutive skips to half a cycle's change: a phase error within one cycle)
    t_0 = cycles_one_by_one(at, s, 1, accel, distance, ci, mu)[0]
    t_m = cycles_one_by_one(at, s_ref, 1, accel, distance, ci, mu)[0]
    assert dt == pytest.approx(t_ref + 0.5 * (t_m - t_0), rel=1e-7)
    assert abs(dt - t_ref) <= 0.5 * abs(t_m - t_0) * 1.001 + 1e-12
    # the impulse: the impacts' sum (held acceleration and friction act over the skip's duration,
    # which differs from the cycles' by that bias)
    assert abs(impulse - j_ref) <= mu * (abs(g) + slide) * abs(dt - t_ref) * 1.01 + 1e-9 * mu * s
    assert impulse != pytest.approx(j_ref + 2 * mu * s, abs=1e-3 * mu * s)
    assert abs(sm * sm - s * s) <= endstop_bounces.RATTLE_STEP * s * s * (1 + 1e-9)
    assert t_ref + cycles_one_by_one(at, s_ref, 1, accel, distance, ci, mu)[0] <= span


def test_rattle_envelope_periodic_rattle_fills_the_span():
    """ci = 1, g != 0 without friction: E is unchanged per cycle (the speed map's fixed point):
    whole periods up to one before span."""
    distance, mu, s, g = 0.02, 1.0, 2.0, 30.0
    accel = accelerations(g, 0.0)
    span = 1.0
    dt, sm, impulse, m = endstop_bounces._rattle_envelope(
        S1, s, make_leg(accel, distance), accel, distance, 1.0, 1e-4, mu, g, 0.0, span
    )
    period = cycles_one_by_one(S1, s, 1, accel, distance, 1.0, mu)[0]
    assert sm == pytest.approx(s, rel=1e-12)
    assert m == math.floor(span / period) - 1
    assert dt == pytest.approx(m * period, rel=1e-12)
    assert impulse == pytest.approx(mu * g * dt, rel=1e-9)


def test_rattle_envelope_stops_before_the_speed_reaches_eps_dv():
    distance, mu, s, g, ci = 0.02, 1.0, 1.0, 5.0, 0.9
    accel = accelerations(g, 0.0)
    eps = 0.75
    got = endstop_bounces._rattle_envelope(
        S1, s, make_leg(accel, distance), accel, distance, ci, eps, mu, g, 0.0, 10.0
    )
    if got is not None:
        dt, sm, impulse, m = got
        assert ci * sm > eps
        assert sm == pytest.approx(
            cycles_one_by_one(S1, s, m, accel, distance, ci, mu)[2], rel=1e-9
        )


@pytest.mark.parametrize("side, u", [(S1, -3.0), (S2, 3.0)])
@pytest.mark.parametrize(
    "ci, g, friction, span",
    [
        (0.9, 20.0, False, 0.1),
        (0.8, -7.0, False, 0.05),
        (0.7, 0.0, False, 1.0),
        (0.95, 3.0, True, 0.08),
    ],
)
def test_rattle_leg_by_leg(side, u, ci, g, friction, span):
    mu, l1, l2 = 2.0, 0.012, 0.008
    p = endstop.Parameters(
        mode=endstop.RIGID,
        kind=endstop.BY_COEFFICIENT,
        ci=ci,
        l1=l1,
        l2=l2,
        eps_dv=1e-3,
        friction=friction,
        kindF=endstop.STICK_SLIP,
        Fst=3.0,
        Fsl=2.0,
    )
    slide = 2.0 / mu if friction else 0.0
    got = endstop_bounces.rattle_series(side, u, mu, g, p, span)
    ref = rattle_one_by_one(side, u, mu, g, ci, 1e-3, l1 + l2, slide, span)
    assert ref is not None
    t, at, w, impulse, impacts, permanent = got
    assert (at, impacts, permanent) == ref[1:2] + ref[4:]
    assert t == pytest.approx(ref[0], rel=1e-12)
    assert w == pytest.approx(ref[2], rel=1e-12, abs=1e-15)
    assert impulse == pytest.approx(ref[3], rel=1e-12, abs=1e-12)


def test_rattle_that_is_none():
    p = endstop.Parameters(mode=endstop.RIGID, ci=0.9, l1=0.01, l2=0.01)
    assert (
        endstop_bounces.rattle_series(S1, 1.0, 1.0, 0.0, p, 1.0) is None
    )  # leaving stop 1 towards +x: no
    assert endstop_bounces.rattle_series(S2, -1.0, 1.0, 0.0, p, 1.0) is None
    assert (
        endstop_bounces.rattle_series(S1, -1.0, 1.0, 0.0, p, 1e-3) is None
    )  # no leg ends within span
    assert endstop_bounces.rattle_series(S1, -1.0, 1.0, math.inf, p, 1.0) is None
    assert endstop_bounces.rattle_series(S1, -1.0, 0.0, 0.0, p, 1.0) is None
    assert (
        endstop_bounces.rattle_series(
            S1, -1.0, 1.0, 0.0, endstop.Parameters(mode=endstop.ELASTIC), 1.0
        )
        is None
    )
    assert (
        endstop_bounces.rattle_series(
            S1, -1.0, 1.0, 0.0, endstop.Parameters(mode=endstop.RIGID, l1=-0.01, l2=0.01), 1.0
        )
        is None
    )
    # continuous friction (kindF 1, defaults Fst = 10, Fsl = 8, dvL = 1e-3): a leg is followed with the
    # sliding level Fsl only while its speed stays above dvL*(1 + ln((Fst - Fsl)/(1e-17*Fsl))) = 0.038 m/s
    cont = endstop.Parameters(mode=endstop.RIGID, friction=True, ci=0.9)
    assert endstop_bounces.rattle_series(S1, -0.03, 1.0, 0.0, cont, 1.0) is None
    s1 = math.sqrt(1.0 - 2.0 * 8.0 * 0.02)  # 1 m/s against 8 m/s2 over 2 cm
    t1 = 0.04 / (1.0 + s1)
    got = endstop_bounces.rattle_series(S1, -1.0, 1.0, 0.0, cont, t1 * (1 + 1e-9))
    assert got[:2] == (pytest.approx(t1, rel=1e-14), S2) and got[2] == pytest.approx(
        0.9 * s1, rel=1e-14
    )
    q = endstop.Parameters(mode=endstop.RIGID, friction=True, kindF=endstop.STICK_SLIP, Fsl=-1.0)
    assert endstop_bounces.rattle_series(S1, -1.0, 1.0, 0.0, q, 1.0) is None
    # a leg that turns back (g pushes it back to stop 1 before stop 2): no rattle
    assert endstop_bounces.rattle_series(S1, -0.1, 1.0, 100.0, p, 1.0) is None


def test_rattle_becomes_permanent_at_eps_dv():
    mu, ci, eps = 1.0, 0.5, 0.2
    p = endstop.Parameters(mode=endstop.RIGID, ci=ci, l1=0.01, l2=0.01, eps_dv=eps)
    got = endstop_bounces.rattle_series(S1, -1.0, mu, 0.0, p, 10.0)
    # speeds 1 -> 0.5 (at stop 2) -> 0.25 (stop 1) -> 0.125 <= eps: permanent at stop 2 after 3 impacts
    assert got[1:] == (S2, 0.0, pytest.approx(-1.5 + 0.75 - 0.25), 3, True)
    assert got[0] == pytest.approx(0.02 / 1.0 + 0.02 / 0.5 + 0.02 / 0.25)


@pytest.mark.parametrize("ci, g", [(1.0, 0.0), (0.99999, 0.0), (0.99999, 30.0), (1.0, -20.0)])
def test_rattle_beyond_rattle_exact_legs_follows_the_envelope(ci, g):
    """More than RATTLE_EXACT legs: the rattle's envelope continues with the speed of the rattle
    followed leg by leg (the affine map of E) and the momentum balance of its impulses."""
    mu, u, span = 1.0, -400.0, 3.0
    p = endstop.Parameters(
        mode=endstop.RIGID, kind=endstop.BY_COEFFICIENT, ci=ci, l1=0.01, l2=0.01, eps_dv=1e-4
    )
    t, at, w, impulse, impacts, permanent = endstop_bounces.rattle_series(S1, u, mu, g, p, span)
    assert impacts > endstop_bounces.RATTLE_EXACT and not permanent
    ref = rattle_one_by_one(S1, u, mu, g, ci, 1e-4, 0.02, 0.0, t * (1 + 1e-12))
    # speed at the stop against the rattle followed leg by leg to the same time
    assert abs(w) == pytest.approx(
        abs(ref[2]), rel=1e-6, abs=2 * abs(g) * 0.02 / abs(ref[2]) + 2 * (1 - ci) * abs(ref[2])
    )
    assert abs(impacts - ref[4]) <= 2
    assert t <= span
    # momentum balance: the impulses of the stops plus g change the velocity from u to w
    x_sign = {S1: -1.0, S2: 1.0}[at]
    assert impulse == pytest.approx(mu * (u + g * t - w), rel=1e-7, abs=1e-7 * mu * abs(u))
    assert math.copysign(1.0, w) == x_sign


@pytest.mark.parametrize(
    "ci, g, u", [(0.9999, 5.0, -863.0), (0.99999, -50.0, -2000.0), (0.9999999, 0.0, -1e5)]
)
def test_endstop_long_damped_rigid_rattle_envelope_keeps_the_speed_and_momentum(ci, g, u):
    """A damped rattle of 17,000 to 4 million impacts within 1 s under a held acceleration: beyond
    20,000 legs the element follows its envelope (the speed map E' = ci^4*E + p in closed form).
    Against the rattle followed impact by impact: speeds within 1e-8 relative plus the speed change
    over one cycle, 2*|g|*(l1 + l2)/|w| + 2*(1 - ci)*|w| (the phase of the storm is an
    approximation: where in its cycle the motion is; positions within the stops), the impulses' sum equals the
    momentum balance mu*(w0 + g*t - w), and it costs < 0.2 s of CPU."""
    import time

    p = endstop.Parameters(mode=1, kind=3, ci=ci)
    t0 = time.process_time()
    fast = endstop_prediction.predict(0.0, u, endstop.FREE, 0, 1.0, g, (0.3, 1.0), p)
    assert time.process_time() - t0 < 0.2
    saved = endstop_bounces.RATTLE_EXACT
    try:
        endstop_bounces.RATTLE_EXACT = 10**9
        exact = endstop_prediction.predict(0.0, u, endstop.FREE, 0, 1.0, g, (0.3, 1.0), p)
    finally:
        endstop_bounces.RATTLE_EXACT = saved
    for a, b in zip(fast.states, exact.states):
        assert abs(a[1]) == pytest.approx(
            abs(b[1]), rel=1e-8, abs=abs(g) * 0.04 / abs(b[1]) + 2 * (1 - ci) * abs(b[1])
        )
        assert -0.01 <= a[0] <= 0.01
    assert abs(fast.impacts - exact.impacts) <= 1  # (the phase: one impact more or less)
    w_end = fast.states[-1][1]
    assert fast.impulse == pytest.approx(u + g * 1.0 - w_end, rel=1e-8)
    assert exact.impulse == pytest.approx(u + g * 1.0 - exact.states[-1][1], rel=1e-8)
