"""The segment loop of a contact law, src/contactfmu/mechanics/segments.py: follow (a body
between stops, on a damped floor, a rattle split into sub-regions) and its cycle skipping
(_cycles, _skip_exact, _skip_envelope), against plain event-by-event loops of the analytic contact
map of a linear stop (contact time pi/omega, exit speed times exp(-sigma*pi/omega)), sums written
out, or a statement of the docstring of the function tested. Fast: no FMU, no slow rattles.
"""

import math

import numpy as np
import pytest
from motion_reference import reference_state
from scipy.optimize import brentq

from contactfmu.mechanics import coupler, motion, segments


def test_close_is_relative():
    """_close: equal to a relative 1e-8 of the larger magnitude (_SAME)."""
    assert segments._close(1.0, 1.0 + 0.9e-8) and not segments._close(1.0, 1.0 + 1.1e-8)
    assert segments._close(-1.0, -1.0 - 0.9e-8) and not segments._close(-1.0, -1.0 - 1.1e-8)
    assert segments._close(1.0 + 0.99e-8, 1.0) and not segments._close(1.0 + 1.01e-8, 1.0)
    assert segments._close(0.0, 0.0) and not segments._close(0.0, 1e-300)
    assert segments._close(3.0, 3.0)


def test_expm1_and_largest():
    """_expm1: expm1, inf from 700 on; _largest docstring: the largest m >= 0 with ok(m), capped at 2**62."""
    assert segments._expm1(1.0) == pytest.approx(math.e - 1.0, rel=1e-15)
    assert segments._expm1(699.0) == pytest.approx(math.expm1(699.0), rel=1e-15)
    assert segments._expm1(700.0) == math.inf
    assert segments._expm1(-1e-20) == -1e-20
    for n in (0, 1, 2, 3, 4, 5, 7, 37, 64, 1000, 2**40 + 3):
        assert segments._largest(lambda m: m <= n) == n
    assert segments._largest(lambda m: True) == 2**62
    assert segments._largest(lambda m: m <= 2**62 - 5) == 2**62 - 5
    calls = []
    segments._largest(lambda m: calls.append(m) or m <= 1000)
    assert len(calls) < 30 and max(calls) <= 2048  # doubling, then bisection


# ---- _skip_exact and _skip_envelope: the series against sums written out -------------------------


@pytest.mark.parametrize("rho", [0.9, 0.5, 0.999, 1.0])
@pytest.mark.parametrize("span", [0.05, 0.5, 5.0])
def test_skip_exact_sums_whole_cycles_within_the_span(rho, span):
    """_skip_exact docstring: cycle j takes contact + q/(u rho^j), leaves at u rho^(j+1); the largest
    m with S(m + 1) <= span (direct sums)."""
    u, contact, q = 2.0, 0.01, 0.05
    sums = [0.0]
    while sums[-1] <= span:
        sums.append(sums[-1] + contact + q / (u * rho ** (len(sums) - 1)))
    m = len(sums) - 3  # S(m + 1) <= span < S(m + 2)
    result = segments._skip_exact(u, rho, contact, q, span, 3)
    if m < 1:
        assert result is None
        return
    dur, factor, changes = result
    assert changes == 3 * m
    assert factor == pytest.approx(rho**m, rel=1e-12)
    assert dur == pytest.approx(sums[m], rel=1e-12)


def test_skip_exact_refuses_a_gaining_or_dead_cycle():
    """_skip_exact: rho > 1 (gaining) or rho <= 0: None (a passive law never gains speed)."""
    assert segments._skip_exact(2.0, 1.0000001, 0.01, 0.05, 5.0, 2) is None
    assert segments._skip_exact(2.0, 0.0, 0.01, 0.05, 5.0, 2) is None
    assert segments._skip_exact(2.0, -0.5, 0.01, 0.05, 5.0, 2) is None
    # exactly one cycle fits before the next would end past the span
    u, contact, q = 1.0, 0.1, 0.1
    span = 2 * (contact + q) + 1e-9  # rho = 1: S(2) <= span < S(3)
    assert segments._skip_exact(u, 1.0, contact, q, span, 2) == (pytest.approx(0.2), 1.0, 2)
    assert segments._skip_exact(u, 1.0, contact, q, 2 * (contact + q) - 1e-9, 2) is None


def test_skip_exact_of_a_very_slow_decay_is_summed_exactly():
    """rho = 1 - 1e-6 (not 1): the sum of cycles contact + q/(u rho^j) (direct sum), S(m+1) <= span."""
    rho, u, contact, q = 1.0 - 1e-6, 1.0, 0.001, 0.01
    dur, factor, changes = segments._skip_exact(u, rho, contact, q, 1.0, 2)
    m = changes // 2
    assert sum(contact + q / (u * rho**j) for j in range(m + 1)) <= 1.0
    assert sum(contact + q / (u * rho**j) for j in range(m + 2)) > 1.0
    assert dur == pytest.approx(sum(contact + q / (u * rho**j) for j in range(m)), rel=3e-10)


def envelope_sums(tau1, q, span):
    sums = [0.0]
    while sums[-1] <= span and len(sums) < 100000:
        sums.append(sums[-1] + tau1 * q ** len(sums))
    return sums


@pytest.mark.parametrize(
    "rho, tau0, tau1, span",
    [
        (0.999, 0.4, 0.4 * 0.999, 100.0),
        (0.999, 0.4, 0.4 * 0.999, 1.5),
        (0.99, 0.3, 0.3 / 0.99, 100.0),
        (0.999, 0.5, 0.5 * 0.999**2, 3.0),
        (0.95, 0.5, 0.5 * 0.95, 100.0),
        (0.5, 0.2, 0.1, 100.0),
    ],
)
def test_skip_envelope_sums_the_fitted_durations(rho, tau0, tau1, span):
    """_skip_envelope docstring: cycle j takes tau1 q^(j+1), q = rho1^p with tau1/tau0 = rho0^p;
    leaves at u rho1^(j+2); m <= log(1 + ENVELOPE_STEP)/|log rho| (at least 1) and S(m + 1) <= span."""
    p = math.log(tau1 / tau0) / math.log(rho)
    q = rho**p
    sums = envelope_sums(tau1, q, span)
    m_span = len(sums) - 3
    m_cap = max(1, int(math.log(1.0 + segments.ENVELOPE_STEP) / -math.log(rho)))
    m = min(m_span, m_cap)
    result = segments._skip_envelope(7.0, rho, rho, tau0, tau1, span, 2)
    if m < 1:
        assert result is None
        return
    dt, factor, changes = result
    assert changes == 2 * m
    assert factor == pytest.approx(rho**m, rel=1e-12)
    assert dt == pytest.approx(sums[m], rel=1e-10)


def test_skip_envelope_periodic_and_refused():
    """_skip_envelope docstring: undamped (rho = 1, same duration twice) skips whole periods up to the
    span; otherwise (gaining, drifting ratio, no time, no whole cycle) None."""
    tau = 0.3
    dt, factor, changes = segments._skip_envelope(1.0, 1.0, 1.0, tau, tau, 10.0, 2)
    assert (
        factor == 1.0 and changes == 2 * 32 and dt == pytest.approx(32 * tau, rel=1e-14)
    )  # 33 tau <= 10 < 34 tau
    assert segments._skip_envelope(1.0, 1.0, 1.0, tau, tau * (1 + 2e-8), 10.0, 2) is None
    assert segments._skip_envelope(1.0, 1.0, 1.0, tau, tau * (1 + 0.5e-8), 10.0, 2) is not None
    assert segments._skip_envelope(1.0, 0.99, 1.0, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 1.0, 0.99, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.9, 0.99, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 1.01, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.0, 0.99, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 0.0, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 0.99, 0.0, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 0.99, tau, 0.0, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 1.0, 1.0, tau, tau, 0.5, 2) is None
    # the drift tolerance 0.1*(1 - rho1), from both sides
    assert segments._skip_envelope(1.0, 0.9909, 0.99, tau, tau * 0.99, 10.0, 2) is not None
    assert segments._skip_envelope(1.0, 0.9891, 0.99, tau, tau * 0.99, 10.0, 2) is not None
    assert segments._skip_envelope(1.0, 0.9911, 0.99, tau, tau * 0.99, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.9889, 0.99, tau, tau * 0.99, 10.0, 2) is None


def test_skip_envelope_of_a_fast_decay_skips_one_cycle():
    """rho = 0.5: the speed cap log(1.02)/log(2) < 1 still allows one cycle (max(1, ...))."""
    dt, factor, changes = segments._skip_envelope(1.0, 0.5, 0.5, 0.2, 0.1, 100.0, 4)
    assert (factor, changes) == (0.5, 4)
    assert dt == pytest.approx(0.1 * 0.5, rel=1e-12)  # tau1*q, q = 0.5^1


# ---- follow: a body between two linear stops, against the analytic contact map ------------------

GAP, UP, LOW = 0, 1, -1


def two_stops(half, c, d, g):
    """(classify, law) of a gap |x| <= half between two spring-damper stops F = c*(x -+ half) + d*w
    (follow's docstring: law(region) -> (c, d, xe, exits, transmits)); on a boundary, the side the
    motion goes to."""

    def classify(x, w):
        if x > half or (x == half and (w > 0.0 or (w == 0.0 and g > 0.0))):
            return UP
        if x < -half or (x == -half and (w < 0.0 or (w == 0.0 and g < 0.0))):
            return LOW
        return GAP

    laws = {
        GAP: (0.0, 0.0, 0.0, ((1.0, 0.0, half, -1), (1.0, 0.0, -half, 1)), False),
        UP: (c, d, half, ((1.0, 0.0, half, 1),), True),
        LOW: (c, d, -half, ((1.0, 0.0, -half, -1),), True),
    }
    return classify, laws.__getitem__


def rattle_reference(x0, w0, half, mu, c, d, times):
    """g = 0, underdamped stops, start in the gap: event by event with the analytic contact map.
    In a stop, y = x -+ half = (u/om) e^(-sigma t) sin(om t): contact time pi/om, exit speed
    u*exp(-sigma*pi/om); in the gap, uniform motion. Returns ([(x, w)], onset, changes)."""
    sigma, om = 0.5 * d / mu, math.sqrt(c / mu - (0.5 * d / mu) ** 2)
    tcon, rho = math.pi / om, math.exp(-0.5 * d / mu * math.pi / om)
    out, t, x, w, changes, onset = [], 0.0, x0, w0, 0, None
    for tq in times:
        while True:
            wall = half if w > 0 else -half
            t_hit = t + (wall - x) / w
            if tq <= t_hit:  # in the gap at tq
                out.append((x + w * (tq - t), w))
                break
            if onset is None:
                onset = t_hit
            if tq <= t_hit + tcon:  # in the stop at tq
                s = tq - t_hit
                e = math.exp(-sigma * s)
                out.append(
                    (
                        wall + w / om * e * math.sin(om * s),
                        w * e * (math.cos(om * s) - sigma / om * math.sin(om * s)),
                    )
                )
                break
            t, x, w = t_hit + tcon, wall, -w * rho
            changes += 2
    n = changes
    # changes up to the last time: + 1 if it is inside a stop
    wall = half if w > 0 else -half
    if times[-1] > t + (wall - x) / w:
        n += 1
    return out, onset, n


def test_follow_one_bounce_is_the_analytic_contact():
    """follow docstring: states at the times, onset = the first contact, changes = region changes;
    a free approach at 1 m/s to a stop 0.1 m away, a damped spring contact, the rebound."""
    half, mu, c, d = 0.1, 2.0, 2e4, 20.0
    classify, law = two_stops(half, c, d, 0.0)
    times = [0.05, 0.1, 0.11, 0.12, 0.2, 0.25]
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, d, times)
    assert onset == pytest.approx(ref_onset, rel=1e-12) and onset == pytest.approx(0.1, rel=1e-12)
    assert changes == ref_changes == 2
    for (x, w), (xr, wr) in zip(out, ref, strict=True):
        assert x == pytest.approx(xr, rel=1e-9, abs=1e-12)
        assert w == pytest.approx(wr, rel=1e-9, abs=1e-12)


def test_follow_times_in_the_contact_and_onset_at_the_start():
    """A start inside a stop: onset 0 (follow docstring); the last time inside the stop (1 change)."""
    half, mu, c, d = 0.1, 1.0, 1e4, 10.0
    classify, law = two_stops(half, c, d, 0.0)
    out, onset, changes = segments.follow(0.1, 1.0, mu, 0.0, [0.01], classify, law)
    assert onset == 0.0 and changes == 0
    xr, wr = reference_state(0.1, 1.0, mu, 0.0, c, d, 0.1, 0.01)
    assert out[0] == pytest.approx((xr, wr), rel=1e-10)
    # free all along: no onset, no change, uniform motion
    out, onset, changes = segments.follow(0.0, 0.5, mu, 0.0, [0.1, 0.15], classify, law)
    assert onset is None and changes == 0
    assert out == [pytest.approx((0.05, 0.5)), pytest.approx((0.075, 0.5))]
    # the hit exactly at a requested time, then one more time in the stop
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, [0.1, 0.105], classify, law)
    assert onset == pytest.approx(0.1, rel=1e-14) and changes == 1
    assert out[0] == pytest.approx((0.1, 1.0), rel=1e-12)
    assert out[1] == pytest.approx(reference_state(0.1, 1.0, mu, 0.0, c, d, 0.1, 0.005), rel=1e-9)


@pytest.mark.parametrize(
    "d, times", [(0.6, [0.3, 2.0, 7.3, 7.31]), (2.0, [1.0, 4.0]), (0.0, [0.5, 6.0, 6.002])]
)
def test_follow_rattle_without_other_forces_is_the_event_by_event_contact_map(d, times):
    """follow docstring (g = 0): whole rattle cycles summed as a geometric series give the states of
    the event-by-event contact map written out (contact time pi/om, exit speed ratio
    exp(-sigma pi/om), flights across the gap), to rounding; the same number of changes."""
    half, mu, c = 0.01, 1.0, 1e6
    classify, law = two_stops(half, c, d, 0.0)
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, d, times)
    assert ref_changes > 200
    assert changes == ref_changes
    assert onset == pytest.approx(ref_onset, rel=1e-12)
    for (x, w), (xr, wr) in zip(out, ref, strict=True):  # measured: 4e-11, 3e-10
        assert x == pytest.approx(xr, rel=4e-10, abs=1e-15)
        assert w == pytest.approx(wr, rel=3e-9, abs=1e-15)


def test_follow_event_by_event_meets_the_event_storm():
    """follow docstring: exact=True simulates event by event; more than MAX_SEGMENTS changes raise
    EventStorm (its docstring); the default (cycle skipping) finishes with the same changes."""
    half, mu, c, d = 0.001, 1.0, 1e6, 0.05
    classify, law = two_stops(half, c, d, 0.0)
    times = [30.0]
    ref, _, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, d, times)
    assert ref_changes > segments.MAX_SEGMENTS
    with pytest.raises(
        motion.EventStorm, match=f"more than {segments.MAX_SEGMENTS} contact changes"
    ):
        segments.follow(0.0, 1.0, mu, 0.0, times, classify, law, exact=True)
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    assert changes == ref_changes
    assert out[0] == pytest.approx(ref[0], rel=1e-7)  # measured: 6e-9


def test_follow_nonfinite_inputs_give_nan_states():
    """follow: overflowed (non-finite) inputs give non-finite states at every requested time."""
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)
    # (overflowed: a non-finite value, or values whose sum is beyond the float range)
    for x, w, g in [
        (math.inf, 0.0, 0.0),
        (0.0, math.nan, 0.0),
        (0.0, 0.0, -math.inf),
        (1e308, 1e308, 0.0),
        (1e308, 0.0, 1e308),
        (0.0, 1e308, 1e308),
    ]:
        out, onset, changes = segments.follow(x, w, 1.0, g, [0.1, 0.2, 0.3], classify, law)
        assert len(out) == 3 and all(math.isnan(a) and math.isnan(b) for a, b in out)
        assert changes == 0  # no motion predicted: no region change


def test_couple_of_overflowed_inputs_is_not_a_silent_zero_force():
    """follow/couple docstrings: overflowed inputs give non-finite results, which the FMU reports:
    the force couple computes from follow's prediction is not finite (never a silent F = 0)."""
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)

    def predict(x, w, state, times):
        return segments.follow(x, w, 1.0, 0.0, times, classify, law)

    for x, w in [(math.inf, 0.0), (0.0, math.nan), (1e308, 1e308)]:
        f, _ = coupler.couple(x, w, 1.0, 0.0, 1e-3, None, predict, False)
        assert not math.isfinite(f)


# ---- follow under a held acceleration: a body bouncing on a damped spring floor -----------------


def floor(c, d, g):
    """(classify, law) of a floor at x = 0: free above, F = c*x + d*w below (follow's docstring)."""

    def classify(x, w):
        return LOW if (x < 0.0 or (x == 0.0 and (w < 0.0 or (w == 0.0 and g < 0.0)))) else GAP

    laws = {
        GAP: (0.0, 0.0, 0.0, ((1.0, 0.0, 0.0, 1),), False),
        LOW: (c, d, 0.0, ((1.0, 0.0, 0.0, -1),), True),
    }
    return classify, laws.__getitem__


def floor_contact(u, mu, c, d, g):
    """Contact from (0, -u) under g: x = xp + e^(-s t)(y0 cos(om t) + B sin(om t)), xp = mu g/c;
    the exit (first return to x = 0, brentq) and x(t), w(t)."""
    s, om = 0.5 * d / mu, math.sqrt(c / mu - (0.5 * d / mu) ** 2)
    xp = mu * g / c
    y0 = -xp
    b = (-u + s * y0) / om

    def x(t):
        return xp + math.exp(-s * t) * (y0 * math.cos(om * t) + b * math.sin(om * t))

    def w(t):
        return math.exp(-s * t) * (
            (om * b - s * y0) * math.cos(om * t) - (s * b + om * y0) * math.sin(om * t)
        )

    ts = np.linspace(0.0, 2.0 * math.pi / om, 400)[1:]
    i = next(i for i, t in enumerate(ts) if x(t) > 0.0)
    te = brentq(x, ts[i - 1], ts[i], xtol=1e-16, rtol=1e-15)
    return te, w(te), x, w


def bouncing_reference(u0, mu, c, d, g, times):
    """Event by event: flights 2u/|g| from x = 0 at speed u, contacts by floor_contact."""
    out, t, u, changes = [], 0.0, u0, 0
    for tq in times:
        while True:
            tf = 2.0 * u / -g
            if tq <= t + tf:
                s = tq - t
                out.append((u * s + 0.5 * g * s * s, u + g * s))
                break
            te, ue, xf, wf = floor_contact(u, mu, c, d, g)
            if tq <= t + tf + te:
                out.append((xf(tq - t - tf), wf(tq - t - tf)))
                break
            t, u = t + tf + te, ue
            changes += 2
    return out, changes


def test_follow_bouncing_under_gravity_follows_the_envelope():
    """follow docstring (g != 0): EXACT_CHANGES changes event by event (the states of the analytic
    bounce map to rounding), then the envelope: more changes than MAX_SEGMENTS in all, the bounce
    energy (take-off speed sqrt(w^2 - 2 g x)) of the event-by-event map to the approximation
    (measured 4.3e-4) and the same number of changes to two cycles (measured: 2 changes)."""
    mu, c, d, g = 1.0, 1e5, 0.02, -9.81
    classify, law = floor(c, d, g)
    times = [100.0, 250.0, 600.0, 1000.0]
    out, onset, changes = segments.follow(0.0, 1.0, mu, g, times, classify, law)
    ref, ref_changes = bouncing_reference(1.0, mu, c, d, g, times)
    assert ref_changes > segments.MAX_SEGMENTS
    assert abs(changes - ref_changes) <= 4
    assert onset == pytest.approx(2.0 / 9.81, rel=1e-12)
    assert out[0] == pytest.approx(ref[0], rel=1e-9)  # before the envelope (1e-12)
    for (x, w), (xr, wr) in zip(out, ref, strict=True):
        assert math.sqrt(w * w - 2 * g * x) == pytest.approx(
            math.sqrt(wr * wr - 2 * g * xr), rel=4e-3
        )


def test_skip_boundaries_of_the_documented_series():
    """_skip_exact/_skip_envelope docstrings: the largest m with S(m + 1) <= span, equality included
    (dyadic durations: exact sums); refusals of a gaining, zero or vanishing speed ratio."""
    # _skip_exact, rho = 1: S(m) = m*(contact + q/u) = 0.5 m; span 2 = S(4): m = 3
    assert segments._skip_exact(1.0, 1.0, 0.25, 0.25, 2.0, 2) == (1.5, 1.0, 6)
    # _skip_envelope, periodic: S(m) = m*tau1 = 0.5 m; span 2 = S(4): m = 3
    assert segments._skip_envelope(1.0, 1.0, 1.0, 0.5, 0.5, 2.0, 2) == (1.5, 1.0, 6)
    tau = 0.3
    assert segments._skip_envelope(1.0, 1.01, 1.01, tau, tau, 10.0, 2) is None  # gaining speed
    assert segments._skip_envelope(1.0, 1.5, 1.5, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.0, 0.05, tau, tau, 10.0, 2) is None  # speed ratio 0
    assert segments._skip_envelope(1.0, 0.05, 0.0, tau, 0.5 * tau, 10.0, 2) is None


def velocity_bands(d_pos, d_neg, g):
    """(classify, law) of a damper with d_pos for w > 0 and d_neg for w <= 0 (regions by velocity:
    follow's docstring allows any linear exit condition alpha*x + beta*w)."""

    def classify(x, w):
        return UP if w > 0.0 or (w == 0.0 and g > 0.0) else LOW

    laws = {
        UP: (0.0, d_pos, 0.0, ((0.0, 1.0, 0.0, 1),), True),
        LOW: (0.0, d_neg, 0.0, ((0.0, 1.0, 0.0, -1),), True),
    }
    return classify, laws.__getitem__


def test_follow_velocity_regions_is_the_piecewise_damper():
    """follow with regions split by the velocity: mu w' = mu g - d w, d = 2 for w > 0, then d = 4
    for w <= 0: w = winf + (w0 - winf) e^(-k t) in each, the switch where w = 0 (analytic)."""
    mu, g = 1.0, -3.0
    classify, law = velocity_bands(2.0, 4.0, g)
    k1, winf1 = 2.0, g / 2.0
    t1 = math.log((1.0 - winf1) / -winf1) / k1  # w = 0 from w0 = 1
    k2, winf2 = 4.0, g / 4.0
    times = [0.5 * t1, t1 + 0.3, t1 + 2.0]
    out, onset, changes = segments.follow(0.0, 1.0, mu, g, times, classify, law)
    x1 = winf1 * t1 + (1.0 - winf1) * -math.expm1(-k1 * t1) / k1

    def second(s):
        return x1 + winf2 * s + winf2 * math.expm1(-k2 * s) / k2, winf2 * -math.expm1(-k2 * s)

    expected = [
        (
            winf1 * times[0] + (1.0 - winf1) * -math.expm1(-k1 * times[0]) / k1,
            winf1 + (1.0 - winf1) * math.exp(-k1 * times[0]),
        ),
        second(0.3),
        second(2.0),
    ]
    assert changes == 1 and onset == 0.0
    for got, exp in zip(out, expected, strict=True):
        assert got == pytest.approx(exp, rel=1e-9, abs=1e-15)


def upper_exit_times(x0, w0, half, mu, c, d, t_end):
    """Times of the exits from the upper stop of the g = 0 rattle (the analytic contact map)."""
    om = math.sqrt(c / mu - (0.5 * d / mu) ** 2)
    tcon, rho = math.pi / om, math.exp(-0.5 * d / mu * math.pi / om)
    t, x, w, exits = 0.0, x0, w0, []
    while t < t_end:
        wall = half if w > 0 else -half
        t, x, w = t + (wall - x) / w + tcon, wall, -w * rho
        if wall > 0:
            exits.append(t)
    return exits


def test_follow_rattle_skips_as_soon_as_two_cycles_are_measured():
    """follow docstring (g = 0): once two consecutive cycles agree, the whole cycles up to the last
    complete one before the next requested time are summed: the first skip at the third exit from
    a stop, then, after the next requested time, two cycles later again. The segments simulated
    (classify calls) = 1 + all changes - 4 per skipped cycle (cycle counts from the contact map)."""
    half, mu, c, d = 0.01, 1.0, 1e6, 0.6
    classify, law = two_stops(half, c, d, 0.0)
    calls = []

    def counting(x, w):
        calls.append(1)
        return classify(x, w)

    t1, t2 = 2.0037, 7.3113
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, [t1, t2], counting, law)
    _, _, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, d, [t1, t2])
    ea = upper_exit_times(0.0, 1.0, half, mu, c, d, t2 + 1.0)
    m1 = max(m for m in range(1, len(ea) - 3) if ea[3 + m] <= t1)
    m2 = max(m for m in range(1, len(ea) - 5 - m1) if ea[5 + m1 + m] <= t2)
    assert changes == ref_changes
    assert len(calls) == 1 + ref_changes - 4 * (m1 + m2)


def test_follow_undamped_bouncing_is_periodic_after_exact_changes():
    """follow docstring (g != 0): EXACT_CHANGES changes simulated exactly, then the rattle's envelope;
    an undamped floor (d = 0) under g bounces periodically (period: flight 2u/|g| + the contact's
    return time, floor_contact): whole periods up to the requested time are skipped at once. The
    state is the periodic motion's, the changes its count, and the segments simulated (classify
    calls) 1 + EXACT_CHANGES + the changes in the last one to two periods."""
    mu, c, g, u = 1.0, 1e5, -9.81, 1.0
    classify, law = floor(c, 0.0, g)
    calls = []

    def counting(x, w):
        calls.append(1)
        return classify(x, w)

    te, ue, xf, wf = floor_contact(u, mu, c, 0.0, g)
    assert ue == pytest.approx(u, rel=1e-12)
    tau = 2.0 * u / -g + te
    t_end = 6000.5 * tau + 0.3 * (2.0 * u / -g)  # in a flight
    out, onset, changes = segments.follow(0.0, u, mu, g, [t_end], counting, law)
    n = math.floor(t_end / tau)
    s = t_end - n * tau
    assert out[0] == pytest.approx(
        (u * s + 0.5 * g * s * s, u + g * s), rel=2e-8
    )  # measured 2.3e-9
    assert changes == 2 * n
    m = math.floor((t_end - (segments.EXACT_CHANGES // 2) * tau) / tau) - 1
    assert len(calls) == 1 + changes - 2 * m


def preloaded_stops(half, c, d, p):
    """(classify, law) of two stops preloaded by p: F = c*(x - (half - p)) + d*w beyond half (a force
    c*p at first contact): the contact map is not a scaled copy of itself (no geometric rattle)."""

    def classify(x, w):
        if x > half or (x == half and w > 0.0):
            return UP
        return LOW if x < -half or (x == -half and w < 0.0) else GAP

    laws = {
        GAP: (0.0, 0.0, 0.0, ((1.0, 0.0, half, -1), (1.0, 0.0, -half, 1)), False),
        UP: (c, d, half - p, ((1.0, 0.0, half, 1),), True),
        LOW: (c, d, -half + p, ((1.0, 0.0, -half, -1),), True),
    }
    return classify, laws.__getitem__


@pytest.mark.parametrize("c, d, p", [(1e4, 0.01, 1e-3), (1e4, 0.05, 1e-4), (1e6, 0.5, 1e-6)])
def test_follow_rattle_that_is_not_geometric_is_not_skipped(c, d, p):
    """follow docstring (g = 0): cycles are summed only once two consecutive cycles agree (ratio,
    contact time and speed*flight time): a preloaded rattle, whose cycles change, gives the states
    of the event-by-event motion (exact=True, the docstring's reference) (measured: identical)."""
    classify, law = preloaded_stops(0.01, c, d, p)
    times = [1.0, 3.0]
    out, onset, changes = segments.follow(0.0, 1.0, 1.0, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = segments.follow(
        0.0, 1.0, 1.0, 0.0, times, classify, law, exact=True
    )
    assert changes == ref_changes > 100 and onset == ref_onset
    for got, exp in zip(out, ref, strict=True):
        assert got == pytest.approx(exp, rel=1e-12, abs=1e-15)


def test_skip_series_sums_and_largest():
    assert segments._largest(lambda m: m <= 37) == 37
    assert segments._largest(lambda m: m <= 0) == 0
    assert segments._largest(lambda m: m <= 1) == 1
    assert segments._largest(lambda m: True) == 2**62
    assert segments._expm1(1.0) == pytest.approx(math.e - 1.0)
    assert segments._expm1(701.0) == math.inf
    # cycle j takes contact + q/(u*rho^j): durations summed directly
    u, rho, contact, q = 2.0, 0.9, 0.01, 0.05
    dur, factor, changes = segments._skip_exact(u, rho, contact, q, 0.5, 2)
    m = round(math.log(factor) / math.log(rho))
    direct = sum(contact + q / (u * rho**j) for j in range(m))
    assert dur == pytest.approx(direct, rel=1e-12)
    assert changes == 2 * m
    assert sum(contact + q / (u * rho**j) for j in range(m + 1)) <= 0.5
    assert sum(contact + q / (u * rho**j) for j in range(m + 2)) > 0.5
    dur, factor, changes = segments._skip_exact(u, 1.0, contact, q, 0.5, 2)
    assert factor == 1.0 and dur == pytest.approx(changes / 2 * (contact + q / u))
    assert segments._skip_exact(u, 1.1, contact, q, 0.5, 2) is None
    assert segments._skip_exact(u, 0.5, contact, q, 0.01, 2) is None


def test_close():
    assert segments._close(1.0, 1.0 + 1e-9) and not segments._close(1.0, 1.0 + 1e-7)


# ---- the envelope skip of follow() ------------------------------------------------------------


def test_skip_envelope_of_a_bouncing_rattle():
    """A cycle of duration proportional to its speed (a ball bouncing under g: tau = 2*u/g), the speed
    ratio rho per cycle: cycle j takes tau1*rho^(j+1), leaves at u*rho^(j+2)."""
    rho, u, tau0 = 0.999, 2.0, 0.4
    tau1 = tau0 * rho
    dt, factor, changes = segments._skip_envelope(u, rho, rho, tau0, tau1, 100.0, 2)
    m = changes // 2
    assert m == int(
        math.log1p(segments.ENVELOPE_STEP) / -math.log(rho)
    )  # at most ENVELOPE_STEP of speed
    assert factor == pytest.approx(rho**m, rel=1e-12)
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # limited by the span: S(m + 1) <= span < S(m + 2)
    span = 1.5
    dt, factor, changes = segments._skip_envelope(u, rho, rho, tau0, tau1, span, 3)
    m = changes // 3
    assert (
        sum(tau1 * rho ** (j + 1) for j in range(m + 1))
        <= span
        < sum(tau1 * rho ** (j + 1) for j in range(m + 2))
    )
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # a duration growing with a decreasing speed (tau ~ 1/speed: q = 1/rho)
    dt, factor, changes = segments._skip_envelope(u, rho, rho, tau0, tau0 / rho, 100.0, 2)
    m = changes // 2
    assert dt == pytest.approx(sum(tau0 / rho * rho ** -(j + 1) for j in range(m)), rel=1e-10)


def test_skip_envelope_periodic_refused_and_within_the_drift_tolerance():
    tau = 0.3
    dt, factor, changes = segments._skip_envelope(1.0, 1.0, 1.0, tau, tau, 10.0, 2)
    assert (
        factor == 1.0 and changes == 2 * 32 and dt == pytest.approx(32 * tau)
    )  # 33*0.3 <= 10 < 34*0.3
    assert segments._skip_envelope(1.0, 1.0, 1.0, tau, tau * 1.001, 10.0, 2) is None  # not periodic
    assert segments._skip_envelope(1.0, 0.99, 1.0, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 1.0, 0.99, tau, tau, 10.0, 2) is None  # ratio 1 then < 1
    assert segments._skip_envelope(1.0, 0.9, 0.99, tau, tau, 10.0, 2) is None  # drifting ratio
    assert segments._skip_envelope(1.0, 0.99, 1.01, tau, tau, 10.0, 2) is None  # gaining speed
    assert segments._skip_envelope(1.0, 0.0, 0.99, tau, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 0.99, 0.0, tau, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 0.99, 0.99, tau, 0.0, 10.0, 2) is None
    assert segments._skip_envelope(1.0, 1.0, 1.0, tau, tau, 0.5, 2) is None  # no whole cycle fits
    # just within the drift tolerance: 0.1*(1 - rho1)
    assert segments._skip_envelope(1.0, 0.9905, 0.99, tau, tau * 0.99, 10.0, 2) is not None


# ---- _cycles: the cycle map of three exits of the same key --------------------------------------


def records_of(ts, ws, contact, free, changes, x=0.01, key=("UP", "GAP", False), per_cycle=4):
    """Exit records (key, t, x, w, changes, len(history), contact_time, free_time) of follow."""
    return [
        (key, t, x, w, changes + 2 * i, per_cycle * (i + 1), c, f)
        for i, (t, w, c, f) in enumerate(zip(ts, ws, contact, free, strict=True))
    ]


def test_cycles_sum_the_periodic_rattle_without_other_forces():
    """g = 0, the speed returned exactly (undamped): cycles of duration c + f are skipped, the speed
    unchanged (follow's docstring: whole cycles up to the last complete one before the next time);
    cycle: 0.25 s in contact + 0.5 s of flight at 1 m/s, span 10 s: m = 12 ((m + 1)*0.75 <= 10)."""
    rec = records_of([1.0, 1.75, 2.5], [-1.0, -1.0, -1.0], [0.5, 0.75, 1.0], [1.0, 1.5, 2.0], 10)
    history = ["UP", "GAP", "LOW", "GAP"] * 3
    m = int(10.0 / 0.75) - 1  # S(m + 1) <= span: the largest m with (m + 1)*0.75 <= 10
    dt, factor, more = segments._cycles(rec, history, 0.0, 10.0, 14)
    assert (factor, more) == (1.0, 2 * m)
    assert dt == pytest.approx(m * 0.75, rel=1e-14)


def test_cycles_sum_a_damped_rattle_without_other_forces_and_refuse_a_change_of_any_measure():
    """g = 0: skipped only if ratio, contact time AND speed*flight time agree (follow's docstring);
    with all three: the geometric series of the cycles written out."""
    rho, c, q, span = 0.9, 0.25, 0.5, 4.0
    u = [1.0, rho, rho * rho]
    ts = [1.0, 1.0 + c + q / u[0], 1.0 + 2 * c + q / u[0] + q / u[1]]
    cont = [0.5, 0.5 + c, 0.5 + 2 * c]
    free = [1.0, 1.0 + q / u[0], 1.0 + q / u[0] + q / u[1]]
    history = ["UP", "GAP", "LOW", "GAP"] * 3
    dt, factor, more = segments._cycles(
        records_of(ts, [-v for v in u], cont, free, 10), list(history), 0.0, span, 14
    )
    # cycle j from the last exit (speed u2): c + q/(u2 rho^j); the largest m with S(m + 1) <= span
    durations = [c + q / (u[2] * rho**j) for j in range(100)]
    m = max(k for k in range(100) if sum(durations[: k + 1]) <= span)
    assert m >= 1 and more == 2 * m
    assert factor == pytest.approx(rho**m, rel=1e-14)
    assert dt == pytest.approx(sum(durations[:m]), rel=1e-13)
    # one measure differing between the two cycles: no skip
    wrong_ratio = [-1.0, -rho, -rho * rho * 0.99]
    assert (
        segments._cycles(records_of(ts, wrong_ratio, cont, free, 10), list(history), 0.0, span, 14)
        is None
    )
    wrong_contact = [0.5, 0.5 + c, 0.5 + 2.2 * c]
    assert (
        segments._cycles(
            records_of(ts, [-v for v in u], wrong_contact, free, 10), list(history), 0.0, span, 14
        )
        is None
    )
    wrong_flight = [1.0, 1.0 + q / u[0], 1.0 + q / u[0] + 1.1 * q / u[1]]
    assert (
        segments._cycles(
            records_of(ts, [-v for v in u], cont, wrong_flight, 10), list(history), 0.0, span, 14
        )
        is None
    )


def test_cycles_under_a_held_acceleration_follow_the_envelope_from_exact_changes():
    """g != 0: after EXACT_CHANGES changes simulated exactly (at 2000, not 2002) the envelope
    (_skip_envelope's docstring): cycle j takes tau1*q^(j + 1), q = rho1^p, p fitted to the two
    measured durations, leaves at u*rho1^(j + 2); at most as many cycles as change the speed by 2 %."""
    rho, p_exp = 0.999, 0.5  # duration ~ speed^0.5
    u = [1.0, rho, rho * rho]
    tau0, tau1 = 0.2, 0.2 * rho**p_exp
    t0 = 7.0
    ts = [t0, t0 + tau0, t0 + tau0 + tau1]
    # exit positions far from the times (a position read as a time would change every duration)
    rec = records_of(
        ts,
        [-v for v in u],
        [0.1, 0.15, 0.2],
        [0.3, 0.45, 0.6],
        segments.EXACT_CHANGES - 4,
        x=0.003,
        per_cycle=2,
    )
    history = ["FLOOR", "AIR"] * 3
    q = rho**p_exp
    m = int(math.log(1.02) / -math.log(rho))  # the speed cap (the span is long)
    dt, factor, more = segments._cycles(rec, history, -9.81, 1000.0, segments.EXACT_CHANGES)
    assert more == 2 * m and factor == pytest.approx(rho**m, rel=1e-13)
    assert dt == pytest.approx(
        sum(tau1 * q ** (j + 1) for j in range(m)), rel=1e-9
    )  # measured: 1e-13
    # before EXACT_CHANGES: still exact
    assert segments._cycles(list(rec), history, -9.81, 1000.0, segments.EXACT_CHANGES - 1) is None


def test_follow_names_its_prediction_when_it_meets_the_work_bound(monkeypatch):
    """follow: a prediction needing more than MAX_WORK evaluations is an EventStorm naming the
    prediction's horizon (here MAX_WORK lowered to 20: one bounce needs more)."""
    monkeypatch.setattr(motion, "MAX_WORK", 20)
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)
    with pytest.raises(motion.EventStorm, match=r"^contact prediction over 0\.5 s did not finish"):
        segments.follow(0.0, 1.0, 1.0, 0.0, [0.5], classify, law)


# ---- follow: a rattle between stops split into sub-regions of one linear law --------------------


def split_stops(half, c, depth, n):
    """(classify, law) of two undamped stops F = c*(x -+ half), each split into n regions of the same
    law at depths k*depth (k = 1 .. n-1) past its boundary: region +-k, the gap 0; on a boundary,
    the side the motion goes to (g = 0)."""
    bounds = [half + k * depth for k in range(n)]

    def classify(x, w):
        a, v = abs(x), (w if x > 0.0 else -w)
        k = sum(1 for b in bounds if a > b or (a == b and v > 0.0))
        return k if x > 0.0 else -k

    def law(region):
        k, s = abs(region), (1.0 if region > 0 else -1.0)
        if k == 0:
            return 0.0, 0.0, 0.0, ((1.0, 0.0, half, -1), (1.0, 0.0, -half, 1)), False
        exits = [(s, 0.0, bounds[k - 1], 1)]  # s*x >= bound: still in region k
        if k < n:
            exits.append((s, 0.0, bounds[k], -1))
        return c, 0.0, s * half, tuple(exits), True

    return classify, law


def test_follow_skips_a_rattle_through_stops_split_into_regions():
    """follow docstring: a rattle (the same sequence of regions, left the same way) is summed as whole
    cycles, not simulated bounce by bounce; stops split into 4 regions of one undamped law (8 changes
    per stop) rattle periodically: the states are those of the analytic contact map (contact time
    pi/om, the speed returned), with 4 times the changes of unsplit stops, far beyond MAX_SEGMENTS
    changes one by one."""
    half, mu, c = 0.01, 1.0, 1e6
    classify, law = split_stops(half, c, 0.25e-3, 4)  # penetration 1e-3 m: all 4 regions
    times = [30.0, 60.0]
    out, onset, changes = segments.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, 0.0, times)
    assert abs(ref[-1][0]) < half  # the last time in the gap
    assert changes == 4 * ref_changes > segments.MAX_SEGMENTS
    assert onset == pytest.approx(ref_onset, rel=1e-12)
    for (x, w), (xr, wr) in zip(
        out, ref, strict=True
    ):  # measured: 6e-12 m (the phase after 60 s), 3e-16
        assert x == pytest.approx(xr, rel=0.0, abs=6e-11)
        assert w == pytest.approx(wr, rel=4e-15)
