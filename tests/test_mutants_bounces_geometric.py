"""Tests of the geometric bounce series of the rigid EndStop (endstop._geometric_bounces,
_bounce_series and their use in predict), written to kill their surviving mutants (mutation/run.py,
mutation/REPORT.md). Every expected value comes from an independent bounce-by-bounce loop of the
exact kinematics written out here (not from the closed-form series under test): a flight away from
the stop at the constant deceleration a_away (apex after s/a_away at the height s^2/(2*a_away)),
back at the constant acceleration a_back (arrival speed sqrt(2*a_back*h) after sqrt(2*h/a_back)),
and the documented impact law of the Rigid End Stop (SimulationX EndStop documentation, seed 004):
the rebound is ci times the arrival speed; if it is <= eps_dv the contact is permanent (the last
impact is plastic). Only complete cycles within the span are summed (_bounce_series' docstring)."""
import math

import pytest

from contactfmu.components.EndStop import law as es


# ---- the independent reference: bounce by bounce -----------------------------------------------

def bounce_loop(side, speed, a_away, a_back, ci, eps_dv, mu, distance, span, cap=5000):
    """(dt, w, impulse, impacts, permanent) of the complete bounces within span, or None.

    Bounce by bounce from the rebound speed `speed` just after an impact on the stop in direction
    `side` (+1 stop 1, -1 stop 2). None when the accelerations are not positive and finite, when an
    apex reaches the other stop (distance = l1 + l2 away), when the bounces grow (not a decaying
    series) or when no complete cycle fits in span. Stops after `cap` impacts (eps_dv = 0: the
    rebound underflows to 0 long before)."""
    if not (0.0 < a_away < math.inf and 0.0 < a_back < math.inf):
        return None
    t = impulse = 0.0
    impacts, s, permanent = 0, speed, False
    while impacts < cap:
        t_up = s / a_away
        h = s * s / (2.0 * a_away)
        if h >= distance:
            return None                          # reaches the other stop
        arrival = math.sqrt(2.0 * a_back * h)
        t_down = math.sqrt(2.0 * h / a_back)
        if t + t_up + t_down > span:
            break
        t += t_up + t_down
        impacts += 1
        rebound = ci * arrival
        if rebound > s * (1.0 + 1e-9):
            return None                          # growing bounces: no decaying series
        if rebound <= eps_dv:                    # permanent contact: the last impact is plastic
            impulse += side * mu * arrival
            permanent, s = True, 0.0
            break
        impulse += side * mu * (arrival + rebound)
        s = rebound
    if impacts == 0:
        return None
    return t, (0.0 if permanent else -side * s), impulse, impacts, permanent


def close(a, b, rel, abs_=0.0):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_


def assert_same(got, want, rel=1e-12, impacts=None):
    """Every element of (dt, w, impulse, impacts, permanent)."""
    assert (got is None) == (want is None), (got, want)
    if want is None:
        return
    dt, w, J, n, perm = got
    assert close(dt, want[0], rel), (dt, want[0])
    assert close(w, want[1], rel, 1e-300), (w, want[1])
    assert close(J, want[2], rel), (J, want[2])
    assert n == (want[3] if impacts is None else impacts), (n, want[3])
    assert isinstance(n, int)
    assert perm is want[4] or perm == want[4]
    assert (w == 0.0) == perm


# ---- _geometric_bounces ------------------------------------------------------------------------

# (side, speed, a_away, a_back, ci, eps_dv, mu, distance, span): the series ends permanently,
# is cut by span, with eps_dv = 0, ci = 0, unequal accelerations (stick-slip friction), both sides
CASES = [
    (1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 10.0),       # permanent after 30 impacts
    (-1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 10.0),      # the same at stop 2
    (1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 0.5),        # cut by span
    (-1.0, 0.7, 9.81, 9.81, 0.8, 1e-3, 2.0, 0.05, 0.31),
    (1.0, 0.7, 9.81, 9.81, 0.8, 0.0, 2.0, 0.05, 0.5),         # eps_dv = 0, cut by span
    (1.0, 0.7, 9.81, 9.81, 0.8, 0.0, 2.0, 0.05, 0.65),
    (1.0, 0.7, 9.81, 9.81, 0.0, 1e-3, 2.0, 0.05, 1.0),        # plastic: one impact
    (-1.0, 0.7, 9.81, 9.81, 0.0, 0.0, 3.0, 0.05, 1.0),
    (1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 10.0),        # a_away > a_back (sliding friction)
    (-1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 0.4),
    (-1.0, 0.5, 12.0, 7.5, 0.9, 2e-3, 0.5, 0.02, 0.2),
    (1.0, 0.5, 12.0, 7.5, 0.9, 0.0, 0.5, 0.02, 0.2),
    (1.0, 0.3, 5.0, 6.0, 0.5, 1e-4, 1.5, 0.02, 10.0),         # a_back > a_away, r < 1
    (-1.0, 0.3, 5.0, 6.0, 0.5, 1e-4, 1.5, 0.02, 0.15),
    (1.0, 2.0, 100.0, 100.0, 0.3, 0.5, 1.0, 1.0, 10.0),       # 2 impacts: 2 -> 0.6 -> 0.18 <= 0.5? no: 0.6 > 0.5
    (1.0, 2.0, 100.0, 100.0, 0.3, 0.7, 1.0, 1.0, 10.0),       # the first rebound 0.6 <= 0.7: one impact
    (1.0, 1e-3, 9.81, 9.81, 0.6, 2e-4, 4.0, 0.01, 1.0),
    (1.0, 0.1, 0.5, 0.4, 0.7, 1e-3, 1.0, 0.05, 10.0),        # accelerations below 1
    (-1.0, 0.1, 0.5, 0.4, 0.7, 1e-3, 1.0, 0.05, 0.7),
]


@pytest.mark.parametrize("case", CASES)
def test_geometric_bounces_match_the_bounce_by_bounce_kinematics(case):
    got = es._geometric_bounces(*case)
    want = bounce_loop(*case)
    assert want is not None
    # measured relative error of dt, w, impulse: <= 2e-15 (the loop accumulates rounding)
    assert_same(got, want, rel=1e-13)


def test_geometric_bounces_counts_the_documented_bounces():
    # written out: speed 2, g = 100, ci = 0.3: rebounds 0.6, 0.18, 0.054 (<= eps_dv = 0.1: plastic)
    got = es._geometric_bounces(1.0, 2.0, 100.0, 100.0, 0.3, 0.1, 1.0, 1.0, 10.0)
    dt = 2 * (2.0 + 0.6 + 0.18) / 100.0
    J = 1.0 * ((2.0 + 0.6) + (0.6 + 0.18) + 0.18)
    assert got[3] == 3 and got[4] is True and got[1] == 0.0
    assert close(got[0], dt, 1e-14) and close(got[2], J, 1e-14)        # measured 1e-16


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_geometric_bounces_eps_dv_zero_sums_to_the_accumulation_point(side):
    speed, g, ci, mu = 0.7, 9.81, 0.5, 2.0
    got = es._geometric_bounces(side, speed, g, g, ci, 0.0, mu, 0.05, 10.0)
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
    got = es._geometric_bounces(side, speed, g, g, 1.0, 1e-3, mu, 0.05, span)
    m = int(periods)
    assert got[3] == m and got[4] is False
    assert close(got[0], m * period, 1e-14)                  # measured 0
    assert got[1] == -side * speed
    assert close(got[2], side * mu * 2 * speed * m, 1e-14)
    assert_same(got, bounce_loop(side, speed, g, g, 1.0, 1e-3, mu, 0.05, span), rel=1e-13)


def test_geometric_bounces_elastic_shorter_than_a_period_is_none():
    speed, g = 0.4, 9.81
    assert es._geometric_bounces(1.0, speed, g, g, 1.0, 1e-3, 1.0, 0.05, 0.99 * 2 * speed / g) is None
    assert es._geometric_bounces(1.0, speed, g, g, 1.0, 1e-3, 1.0, 0.05, 0.0) is None


@pytest.mark.parametrize("ci", [0.0, 0.5, 0.8])
def test_geometric_bounces_first_cycle_longer_than_span_is_none(ci):
    speed, g = 0.7, 9.81
    first = 2 * speed / g
    assert es._geometric_bounces(1.0, speed, g, g, ci, 1e-3, 1.0, 0.05, 0.999 * first) is None
    assert es._geometric_bounces(-1.0, speed, g, g, ci, 0.0, 1.0, 0.05, 0.5 * first) is None
    got = es._geometric_bounces(1.0, speed, g, g, ci, 1e-3, 1.0, 0.05, 1.001 * first)
    assert got is not None and got[3] == 1


def test_geometric_bounces_apex_reaching_the_other_stop_is_none():
    # apex speed^2/(2*a_away) = 2^2/8 = 0.5 exactly: reaching the other stop at distance 0.5
    assert es._geometric_bounces(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5, 10.0) is None
    assert es._geometric_bounces(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.4, 10.0) is None
    got = es._geometric_bounces(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5 * (1 + 1e-12), 10.0)
    assert_same(got, bounce_loop(1.0, 2.0, 4.0, 4.0, 0.5, 1e-3, 1.0, 0.5 * (1 + 1e-12), 10.0), rel=1e-13)
    # a_back does not enter the apex: a large a_back with the same a_away still reaches it
    assert es._geometric_bounces(1.0, 2.0, 4.0, 40.0, 0.1, 1e-3, 1.0, 0.5, 10.0) is None
    got = es._geometric_bounces(1.0, 2.0, 4.0, 1.0, 0.5, 1e-3, 1.0, 0.6, 10.0)
    assert_same(got, bounce_loop(1.0, 2.0, 4.0, 1.0, 0.5, 1e-3, 1.0, 0.6, 10.0), rel=1e-13)


@pytest.mark.parametrize("a_away, a_back", [(0.0, 9.81), (9.81, 0.0), (-1.0, 9.81), (9.81, -1.0),
                                            (math.inf, 9.81), (9.81, math.inf), (math.inf, math.inf),
                                            (math.nan, 9.81), (9.81, math.nan)])
def test_geometric_bounces_without_positive_finite_accelerations_is_none(a_away, a_back):
    assert es._geometric_bounces(1.0, 0.5, a_away, a_back, 0.8, 1e-3, 1.0, 0.05, 10.0) is None
    assert es._geometric_bounces(-1.0, 0.5, a_away, a_back, 0.8, 1e-3, 1.0, 0.05, 10.0) is None


def test_geometric_bounces_growing_series_is_none():
    # a_back = 4*a_away, ci = 0.75: r = 1.5, every bounce higher than the last
    assert es._geometric_bounces(1.0, 0.1, 1.0, 4.0, 0.75, 1e-3, 1.0, 1.0, 0.3) is None
    assert es._geometric_bounces(1.0, 0.1, 1.0, 4.0, 0.75, 1e-3, 1.0, 1.0, 10.0) is None


def test_geometric_bounces_rebound_exactly_eps_dv_is_permanent():
    # ci = 0.5, a_away = a_back: rebounds 1, 0.5, 0.25 exactly; eps_dv = 0.25 ends at the 3rd impact
    got = es._geometric_bounces(1.0, 1.0, 10.0, 10.0, 0.5, 0.25, 1.0, 1.0, 10.0)
    want = bounce_loop(1.0, 1.0, 10.0, 10.0, 0.5, 0.25, 1.0, 1.0, 10.0)
    assert want[3] == 2 and want[4]
    assert_same(got, want, rel=1e-14)


def test_geometric_bounces_speed_at_or_below_eps_dv_is_one_plastic_impact():
    got = es._geometric_bounces(1.0, 0.01, 10.0, 10.0, 0.5, 0.01, 2.0, 1.0, 10.0)
    assert_same(got, bounce_loop(1.0, 0.01, 10.0, 10.0, 0.5, 0.01, 2.0, 1.0, 10.0), rel=1e-14)
    got = es._geometric_bounces(-1.0, 0.01, 10.0, 10.0, 0.5, 0.02, 2.0, 1.0, 10.0)
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
    assert es._geometric_bounces(1.0, 1.0, a, a, 0.75, eps_dv, 1.0, 10.0, short(first)) is None
    got = es._geometric_bounces(-1.0, 1.0, a, a, 0.75, eps_dv, 2.0, 10.0, short(second))
    assert_same(got, (first, 0.75, -2.0 * 1.75, 1, False), rel=1e-15)   # exact: measured 0
    got = es._geometric_bounces(1.0, 1.0, a, a, 0.75, eps_dv, 2.0, 10.0, second)
    assert got[3] in (1, 2)                                  # a cycle ending at span: rounding decides


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
            got = es._geometric_bounces(1.0, speed, g, g, ci, eps, 1.0, 0.05, span)
            want = bounce_loop(1.0, speed, g, g, ci, eps, 1.0, 0.05, span)
            assert want[3] == k
            assert_same(got, want, rel=1e-13)


# ---- _bounce_series ------------------------------------------------------------------------------

def rigid(**kw):
    base = dict(mode=es.RIGID, l1=0.02, l2=0.03, kind=es.BY_COEFFICIENT, ci=0.8, eps_dv=1e-3)
    base.update(kw)
    return es.Parameters(**base)


EVENTS = [("hit1", 1.0), ("hit2", -1.0)]


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize("ci, eps_dv, span", [(0.8, 1e-3, 10.0), (0.8, 1e-3, 0.3), (0.6, 0.0, 0.25),
                                              (0.0, 1e-3, 1.0), (0.5, 0.0, 10.0)])
def test_bounce_series_without_friction_is_the_bounce_loop(event, side, ci, eps_dv, span):
    mu, g, speed = 2.0, 9.81, 0.5
    p = rigid(ci=ci, eps_dv=eps_dv)
    got = es._bounce_series(event, -side * speed, mu, side * g, p, span)
    want = bounce_loop(side, speed, g, g, ci, eps_dv, mu, p.l1 + p.l2, span)
    # measured relative error <= 3e-16
    assert_same(got, want, rel=1e-13, impacts=10**9 if eps_dv == 0.0 and span == 10.0 else None)


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize("kind, ci", [(es.PLASTIC, 0.0), (es.ELASTIC_IMPACT, 1.0)])
def test_bounce_series_uses_the_restitution_of_the_kind_of_impact(event, side, kind, ci):
    mu, g, speed = 1.5, 9.81, 0.4
    p = rigid(kind=kind, ci=0.5)
    got = es._bounce_series(event, -side * speed, mu, side * g, p, 0.7)
    assert_same(got, bounce_loop(side, speed, g, g, ci, p.eps_dv, mu, p.l1 + p.l2, 0.7), rel=1e-13)


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize("Fsl, span", [(3.0, 10.0), (3.0, 0.2), (0.5, 10.0), (0.0, 0.3), (7.0, 10.0)])
def test_bounce_series_with_stick_slip_friction_slides_out_and_back(event, side, Fsl, span):
    # sliding away, friction adds to the pressing acceleration; sliding back, it subtracts
    mu, g, speed = 2.0, 9.81, 0.5
    p = rigid(friction=True, kindF=es.STICK_SLIP, Fst=5.0, Fsl=Fsl)
    got = es._bounce_series(event, -side * speed, mu, side * g, p, span)
    want = bounce_loop(side, speed, g + Fsl / mu, g - Fsl / mu, 0.8, p.eps_dv, mu, p.l1 + p.l2, span)
    assert want is not None
    assert_same(got, want, rel=1e-13)                        # measured 3e-16


def test_bounce_series_stick_slip_friction_holding_the_body_at_the_apex_is_none():
    mu, g = 2.0, 5.0
    for Fst in (10.0, 10.5):                                 # |mu*g| = 10 <= Fst: sticks at the apex
        p = rigid(friction=True, kindF=es.STICK_SLIP, Fst=Fst, Fsl=3.0)
        assert es._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None
        assert es._bounce_series("hit2", 0.5, mu, -g, p, 10.0) is None
    p = rigid(friction=True, kindF=es.STICK_SLIP, Fst=9.99, Fsl=3.0)
    assert es._bounce_series("hit1", -0.5, mu, g, p, 10.0) is not None
    p = rigid(friction=True, kindF=es.STICK_SLIP, Fst=5.0, Fsl=-1.0)   # negative sliding friction
    assert es._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None
    # sliding friction at least the pressing force: the body never comes back
    p = rigid(friction=True, kindF=es.STICK_SLIP, Fst=5.0, Fsl=10.0)
    assert es._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None


@pytest.mark.parametrize("event, side", EVENTS)
def test_bounce_series_negligible_continuous_friction_is_the_series_without_friction(event, side):
    mu, g, speed = 2.0, 9.81, 0.5
    tiny = 1e-17 * mu * abs(side * g)                        # max(Fst, Fsl) at the documented bound
    for Fst, Fsl in ((tiny, 0.5 * tiny), (0.5 * tiny, tiny), (-tiny, 0.0)):
        p = rigid(friction=True, kindF=es.CONTINUOUS, Fst=Fst, Fsl=Fsl)
        pred = es.Prediction()
        got = es._bounce_series(event, -side * speed, mu, side * g, p, 10.0, pred)
        assert_same(got, bounce_loop(side, speed, g, g, 0.8, p.eps_dv, mu, p.l1 + p.l2, 10.0), rel=1e-13)
        assert pred.flights == 0                             # no flight with friction followed


def test_bounce_series_continuous_friction_above_negligible_follows_the_flights():
    mu, g = 2.0, 9.81
    p = rigid(friction=True, kindF=es.CONTINUOUS, Fst=1e-3, Fsl=8e-4)
    pred = es.Prediction()
    got = es._bounce_series("hit1", -0.5, mu, g, p, 10.0, pred)
    assert got is not None and got[4] is True
    assert 1 <= pred.flights <= got[3]                       # the flights solved one by one
    # within the friction's share of the pressing force of the series without friction
    want = bounce_loop(1.0, 0.5, g, g, 0.8, p.eps_dv, mu, p.l1 + p.l2, 10.0)
    assert close(got[0], want[0], 1e-3) and close(got[2], want[2], 1e-3)
    pred2 = es.Prediction()
    pred2.flights = es.BOUNCE_EXACT - 1                      # the budget of the prediction is shared
    with pytest.raises(es.EventStorm):
        es._bounce_series("hit1", -0.5, mu, g, p, 10.0, pred2)


@pytest.mark.parametrize("event, u, g", [("hit1", 0.5, 9.81), ("hit1", 1.5, 9.81), ("hit2", -0.5, -9.81),
                                         ("hit1", 0.0, 9.81), ("hit2", 0.0, -9.81), ("hit2", -1.0, -9.81)])
def test_bounce_series_moving_into_the_stop_or_at_rest_is_none(event, u, g):
    assert es._bounce_series(event, u, 2.0, g, rigid(), 10.0) is None


@pytest.mark.parametrize("p", [rigid(mode=es.ELASTIC), rigid(l1=0.02, l2=-0.03),
                               rigid(l1=0.02, l2=-0.03, friction=True, kindF=es.CONTINUOUS, Fst=1.0, Fsl=0.8),
                               rigid(mode=es.ELASTIC, friction=True, kindF=es.STICK_SLIP, Fst=1.0, Fsl=0.8)])
def test_bounce_series_only_for_a_rigid_stop_with_backlash(p):
    assert es._bounce_series("hit1", -0.5, 2.0, 9.81, p, 10.0) is None
    assert es._bounce_series("hit2", 0.5, 2.0, -9.81, p, 10.0) is None


def test_bounce_series_preloaded_rigid_element_with_slow_elastic_bounces_is_none():
    # l1 + l2 < 0: the rigid element is a connection on both sides; no bounces, even those slow
    # enough for the friction bounces' envelope (ci >= 0.999, speed in the friction's first band)
    p = rigid(l1=0.02, l2=-0.03, friction=True, kindF=es.CONTINUOUS, Fst=1.0, Fsl=0.8, ci=0.9995, eps_dv=1e-13)
    for u in (1e-7, 1e-9):
        assert es._bounce_series("hit1", -u, 2.0, 9.81, p, 1.0) is None
        assert es._bounce_series("hit2", u, 2.0, -9.81, p, 1.0) is None


def test_bounce_series_at_stop_2_leaving_at_unit_speed():
    p = rigid()
    got = es._bounce_series("hit2", 1.0, 2.0, -100.0, p, 10.0)
    assert_same(got, bounce_loop(-1.0, 1.0, 100.0, 100.0, 0.8, p.eps_dv, 2.0, p.l1 + p.l2, 10.0), rel=1e-13)


# ---- predict: bounces on a rigid stop end to end --------------------------------------------------

def reference_motion(side, L, a_away, a_back, ci, eps_dv, mu, t_end):
    """From rest at dx = 0, the body pressed toward the stop at distance L in direction side: the
    impacts (time, rebound speed, impulse) up to t_end, bounce by bounce, and the state function."""
    T = math.sqrt(2.0 * L / a_back)
    arrival = math.sqrt(2.0 * a_back * L)
    impacts = []
    while T <= t_end:
        rebound = ci * arrival
        if rebound <= eps_dv:
            impacts.append((T, 0.0, side * mu * arrival))
            break
        impacts.append((T, rebound, side * mu * (arrival + rebound)))
        h = rebound * rebound / (2.0 * a_away)
        T += rebound / a_away + math.sqrt(2.0 * h / a_back)
        arrival = math.sqrt(2.0 * a_back * h)

    def state(t):
        """(dx, dv, stop, direction of dv or 0)"""
        if not impacts or t < impacts[0][0]:
            return side * a_back * t * t / 2.0, side * a_back * t, es.FREE, side
        k = max(i for i, imp in enumerate(impacts) if imp[0] <= t)
        Tk, s, _ = impacts[k]
        if s == 0.0:
            return side * L, 0.0, (es.STOP1 if side > 0 else es.STOP2), 0
        tau = t - Tk
        if tau <= s / a_away:
            return side * (L - s * tau + a_away * tau * tau / 2.0), -side * (s - a_away * tau), es.FREE, -side
        tau -= s / a_away
        h = s * s / (2.0 * a_away)
        return side * (L - h + a_back * tau * tau / 2.0), side * a_back * tau, es.FREE, side

    return impacts, state


TIMES = [0.01, 0.05, 0.0731, 0.11, 0.2, 0.2583, 0.31, 0.4, 0.55, 0.8, 1.3]


def check_prediction(pred, impacts, state, times, friction):
    assert len(pred.states) == len(times)
    for t, (x, w, stop, sf) in zip(times, pred.states):
        xr, wr, stopr, direction = state(t)
        assert abs(x - xr) <= 1e-13 and abs(w - wr) <= 1e-12, (t, x, xr, w, wr)   # measured 1e-15
        assert stop == stopr, (t, stop, stopr)
        assert sf == (direction if friction else 0), (t, sf)
    assert pred.impacts == len(impacts)
    assert close(pred.impulse, sum(i[2] for i in impacts), 1e-13)                 # measured 2e-16
    # the element transmits a force from the first impact on; with friction at once
    assert pred.onset == (0.0 if friction else pytest.approx(impacts[0][0], rel=1e-14, abs=0.0))
    assert pred.flights == 0


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("ci, eps_dv", [(0.8, 1e-3), (0.6, 0.02), (0.0, 1e-3), (1.0, 1e-3)])
def test_predict_bounces_on_a_rigid_stop_are_the_bounce_loop(side, ci, eps_dv):
    mu, g = 2.0, 9.81
    p = rigid(ci=ci, eps_dv=eps_dv)
    L = p.l1 if side > 0 else p.l2
    pred = es.predict(0.0, 0.0, es.FREE, 0, mu, side * g, TIMES, p)
    impacts, state = reference_motion(side, L, g, g, ci, eps_dv, mu, TIMES[-1])
    check_prediction(pred, impacts, state, TIMES, False)
    assert pred.changes == len(impacts)                      # each impact is a state change


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("Fsl", [0.0, 3.0])
def test_predict_bounces_with_stick_slip_friction_are_the_bounce_loop(side, Fsl):
    mu, g, ci, eps_dv = 2.0, 9.81, 0.7, 2e-3
    p = rigid(ci=ci, eps_dv=eps_dv, friction=True, kindF=es.STICK_SLIP, Fst=5.0, Fsl=Fsl)
    L = p.l1 if side > 0 else p.l2
    pred = es.predict(0.0, 0.0, es.FREE, 0, mu, side * g, TIMES, p)
    impacts, state = reference_motion(side, L, g + Fsl / mu, g - Fsl / mu, ci, eps_dv, mu, TIMES[-1])
    assert impacts[-1][1] == 0.0
    check_prediction(pred, impacts, state, TIMES, True)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_predict_bounces_without_eps_dv_end_at_the_accumulation_point(side):
    # eps_dv = 0: infinitely many impacts (counted as 1e9) before the accumulation point, then the
    # contact is permanent; stop 2 the same as stop 1 (followed one by one it would never end)
    mu, g, ci = 2.0, 9.81, 0.5
    p = rigid(ci=ci, eps_dv=0.0)
    L = p.l1 if side > 0 else p.l2
    T0, v0 = math.sqrt(2 * L / g), math.sqrt(2 * g * L)
    end = T0 + 2 * ci * v0 / g / (1 - ci)
    times = [0.5 * T0, T0 + 0.3 * (end - T0), end * 1.01, 1.0]
    pred = es.predict(0.0, 0.0, es.FREE, 0, mu, side * g, times, p)
    assert pred.impacts >= 10**9
    # sum of mu*(1 + ci)*ci^k*v0 over all k (the rebounds tend to 0: no plastic last impact)
    assert close(pred.impulse, side * mu * (1 + ci) * v0 / (1 - ci), 1e-13)       # measured 2e-16
    impacts, state = reference_motion(side, L, g, g, ci, 0.0, mu, times[1])
    for t, st in zip(times[:2], pred.states[:2]):
        xr, wr, stopr, _ = state(t)
        assert abs(st[0] - xr) <= 1e-13 and abs(st[1] - wr) <= 1e-12 and st[2] == stopr
    for st in pred.states[2:]:
        assert st == (side * L, 0.0, es.STOP1 if side > 0 else es.STOP2, 0)


def test_predict_continuous_friction_bounces_count_their_flights_in_the_prediction():
    # a rigid stop with continuous friction: the bounces after the first impact are flights solved
    # one by one (_friction_bounces), counted in the prediction (pred.flights) and within its impacts
    mu, g = 2.0, 9.81
    p = rigid(ci=0.6, eps_dv=1e-2, friction=True, kindF=es.CONTINUOUS, Fst=1.0, Fsl=0.8)
    pred = es.predict(0.0, 0.0, es.FREE, 0, mu, g, [1.0], p)
    assert pred.impacts >= 3
    assert 1 <= pred.flights < pred.impacts
    assert pred.states[0][:3] == (p.l1, 0.0, es.STOP1)


@pytest.mark.parametrize("dx, dv, g", [(0.0, 1e308, 1e308), (1e308, 0.0, 1e308), (1e308, 1e308, 0.0),
                                       (-1e308, -1e308, 1.0), (0.0, math.inf, 0.0), (0.0, 0.0, math.nan)])
def test_predict_overflowing_inputs_give_non_finite_states(dx, dv, g):
    pred = es.predict(dx, dv, es.FREE, 0, 1.0, g, [0.1, 0.2], rigid())
    assert len(pred.states) == 2 and pred.onset == 0.0
    assert all(math.isnan(s[0]) and math.isnan(s[1]) and s[2:] == (es.FREE, 0) for s in pred.states)


def test_predict_ignores_the_parameters_of_an_inactive_friction():
    # friction = false: the friction law's parameters do not enter (eps_tau = 0 would divide by 0)
    kw = dict(friction=False, kindTrans=es.TANH, eps_tau=0.0)
    for p in (rigid(**kw), es.Parameters(mode=es.ELASTIC, **kw)):
        pred = es.predict(0.0, 0.1, es.FREE, 0, 1.0, 1.0, [0.01], p)
        x, w, stop, sf = pred.states[0]
        assert close(x, 0.1 * 0.01 + 0.5 * 0.01 ** 2, 1e-14) and close(w, 0.11, 1e-14) and stop == es.FREE


def test_predict_impact_exactly_at_the_last_output_time():
    # free flight at 1 m/s from 0 to the stop at l1 = 0.5 (no other force): the impact is located at
    # the first float time strictly beyond the stop, which is here also the last output time
    p = rigid(l1=0.5, l2=0.5)
    t_hit = math.nextafter(0.5, 1.0)
    pred = es.predict(0.0, 1.0, es.FREE, 0, 1.0, 0.0, [0.25, t_hit], p)
    assert len(pred.states) == 2
    assert pred.states[0] == (0.25, 1.0, es.FREE, 0)
    x, w, stop, sf = pred.states[1]
    assert abs(x - 0.5) <= 2e-16 and w in (1.0, -0.8) and stop == es.FREE
    assert pred.impacts <= 1


def test_elastic_transition_zero_backlash_at_rest_at_the_contact_point_is_free():
    # l1 = l2 = 0, dx = dv = 0: each stop transmits Fstop = 0, i.e. no force; the element is free
    p = es.Parameters(mode=es.ELASTIC, l1=0.0, l2=0.0)
    for stop in (es.FREE, es.STOP1, es.STOP2):
        assert es.elastic_transition(stop, 0.0, 0.0, p) == es.FREE
    assert es.elastic_transition(es.DETACH1, 0.0, 0.0, p) == es.DETACH1   # neither dx < l1 nor dv > 0


def continuous_contact_reference(p, mu, g, x0, w0, t):
    """Stop 1 of the elastic end stop engaged, the continuous friction law in parallel (seed 004 and
    the module docstring): mu*dv' = mu*g - k1*(dx - l1) - b1*dv - Ff(dv), where for dv >= 0.49 >> dvL
    the law is Fsl + (Fst - Fsl)*exp(1 - dv/dvL) = Fsl to far below rounding: the linear
    spring-damper under a constant force (underdamped here), in closed form."""
    delta, w0sq = p.b1 / (2.0 * mu), p.k1 / mu
    wd = math.sqrt(w0sq - delta * delta)
    y0 = x0 - (p.l1 + (mu * g - p.Fsl) / p.k1)              # from the equilibrium
    e, c, s = math.exp(-delta * t), math.cos(wd * t), math.sin(wd * t)
    return (x0 - y0 + e * (y0 * c + (w0 + delta * y0) / wd * s),
            e * (w0 * c - (delta * w0 + w0sq * y0) / wd * s))


def test_predict_elastic_contact_with_continuous_friction_keeps_the_friction():
    p = es.Parameters(mode=es.ELASTIC, l1=0.01, l2=0.01, k1=1e4, b1=10.0, friction=True, kindF=es.CONTINUOUS,
                      Fst=20.0, Fsl=15.0, dvL=1e-3)
    mu, g, x0, w0 = 1.0, 50.0, 0.011, 0.5
    times = [0.002, 0.005, 0.008]
    pred = es.predict(x0, w0, es.STOP1, 0, mu, g, times, p)
    for t, (x, w, stop, sf) in zip(times, pred.states):
        xr, wr = continuous_contact_reference(p, mu, g, x0, w0, t)
        assert stop == es.STOP1 and w > 0.49
        # measured 2e-15 m, 1e-14 m/s (without the friction: 1e-4 m, 0.1 m/s off)
        assert abs(x - xr) <= 2e-14 and abs(w - wr) <= 2e-13, (x, xr, w, wr)


@pytest.mark.parametrize("mode, stop, x0", [(es.ELASTIC, es.STOP1, 0.014), (es.ELASTIC, es.FREE, 0.0),
                                            (es.RIGID, es.FREE, 0.0)])
def test_predict_starting_at_a_friction_node(mode, stop, x0):
    # dv = dvL is a node of the interpolated law: the motion leaves it in the band its acceleration
    # points into (here downwards: mu*g - Fstop - Fst < 0), i.e. dv decreases from dvL at once
    p = es.Parameters(mode=mode, l1=0.01, l2=0.01, k1=1e4, b1=10.0, friction=True, kindF=es.CONTINUOUS,
                      Fst=20.0, Fsl=15.0, dvL=1e-3)
    mu, g = 1.0, 10.0 if stop == es.FREE else 50.0
    acc = g - (p.k1 * (x0 - p.l1) + p.b1 * p.dvL if stop == es.STOP1 else 0.0) / mu - p.Fst / mu
    assert acc < 0.0
    t = 1e-12                                                # dv moves by ~3e-11, within the band below
    pred = es.predict(x0, p.dvL, stop, 0, mu, g, [t], p)
    x, w, st, _ = pred.states[0]
    assert st == stop
    assert pred.changes == 0                                 # no band left: started in the right one
    assert abs(x - (x0 + p.dvL * t + 0.5 * acc * t * t)) <= 1e-15
    assert abs(w - (p.dvL + acc * t)) <= 0.2 * abs(acc) * t


@pytest.mark.parametrize("dx, dv, want", [(0.0, -1.0, es.STOP2), (0.01, -1.0, es.STOP2), (0.005, 0.0, es.STOP2),
                                          (0.02, 1.0, es.FREE), (0.03, 1.0, es.STOP1)])
def test_elastic_transition_with_a_negative_l2(dx, dv, want):
    # l1 = 0.03, l2 = -0.01 (backlash l1 + l2 = 0.02 >= 0): stop 2 is in contact for dx <= -l2 = 0.01
    p = es.Parameters(mode=es.ELASTIC, l1=0.03, l2=-0.01, k1=100.0, k2=100.0, b1=1.0, b2=1.0)
    assert es.elastic_transition(es.FREE, dx, dv, p) == want


def rattling_elastic():
    # undamped elastic stops 2e-6 apart, hit at 1 m/s: four state changes per cycle of ~6 ms
    return es.Parameters(mode=es.ELASTIC, l1=1e-6, l2=1e-6, k1=1e6, k2=1e6, b1=0.0, b2=0.0)


def test_predict_more_state_changes_than_its_limit_is_an_event_storm_naming_the_span(monkeypatch):
    monkeypatch.setattr(es, "MAX_SEGMENTS", 40)
    with pytest.raises(es.EventStorm) as info:
        es.predict(0.0, 1.0, es.FREE, 0, 1.0, 0.0, [100.0], rattling_elastic())
    assert "EndStop" in str(info.value) and "40 state changes" in str(info.value) and "100.0 s" in str(info.value)


def test_predict_more_work_than_its_limit_is_an_event_storm_naming_the_span(monkeypatch):
    from contactfmu.mechanics import contact_motion as cm
    monkeypatch.setattr(cm, "MAX_WORK", 200)
    with pytest.raises(es.EventStorm) as info:
        es.predict(0.0, 1.0, es.FREE, 0, 1.0, 0.0, [100.0], rattling_elastic())
    assert "EndStop prediction over 100.0 s" in str(info.value)
