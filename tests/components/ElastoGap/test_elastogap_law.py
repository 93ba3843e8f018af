"""The ElastoGap law, src/contactfmu/components/ElastoGap/law.py: the force with its exponent and
reference scaling, its rate and derivatives, the clamped damping, the documented defaults, and its
prediction of a body's motion (predict: against solve_ivp of the law, onset and changes by the
contact definition).

Every expected value is independent of the code under test: the MSL 4.1
Translational.Components.ElastoGap documentation written out here, scipy's solve_ivp. No FMU is
built.
"""

import math

import pytest
from elastogap_written_out import elastogap_force
from motion_reference import simulate
from scipy.integrate import solve_ivp

from contactfmu.components.ElastoGap import law as elastogap
from contactfmu.mechanics import motion


def documented_force(*args, **kwargs):
    """flange_b.f of the ElastoGap law written out from its documentation."""
    return elastogap_force(*args, **kwargs)[0]


@pytest.mark.parametrize("n, f_ref, s_ref", [(1.0, 0.0, 1.0), (1.5, 0.0, 0.5), (2.0, 7.0, 0.2)])
@pytest.mark.parametrize(
    "s, v", [(0.1, -1.0), (-0.02, 0.01), (-0.02, -100.0), (-0.02, 100.0), (-0.3, 0.5), (0.05, 0.0)]
)
def test_elastogap_law_its_rate_and_its_derivatives(n, f_ref, s_ref, s, v):
    c, d, s0, a = 40.0, 2.0, 0.05, 3.0
    f, fc, fd, contact = elastogap.force(s, v, c, d, s0, n, s_ref, f_ref)
    assert f == pytest.approx(
        documented_force(s, v, c, d, s0, n, s_ref, f_ref), rel=1e-12, abs=1e-300
    )
    assert contact == (s < s0)
    assert fc + fd == pytest.approx(f)
    if contact:
        fr = f_ref or c * s_ref
        assert fc == pytest.approx(-fr * ((s0 - s) / s_ref) ** n)
    if s == s0:  # the kink at the start of contact: f = 0 and no derivative checked
        assert elastogap.force_rate(s, v, a, c, d, s0, n, s_ref, f_ref) == 0.0
        assert elastogap.interface(s, v, c, d, s0, n, s_ref, f_ref) == (0.0, 0.0)
        return
    e = 1e-7
    numeric_rate = (
        documented_force(s + v * e, v + a * e, c, d, s0, n, s_ref, f_ref)
        - documented_force(s - v * e, v - a * e, c, d, s0, n, s_ref, f_ref)
    ) / (2 * e)
    assert elastogap.force_rate(s, v, a, c, d, s0, n, s_ref, f_ref) == pytest.approx(
        numeric_rate, rel=1e-5, abs=1e-8
    )
    ds = (
        documented_force(s + e, v, c, d, s0, n, s_ref, f_ref)
        - documented_force(s - e, v, c, d, s0, n, s_ref, f_ref)
    ) / (2 * e)
    dv = (
        documented_force(s, v + e, c, d, s0, n, s_ref, f_ref)
        - documented_force(s, v - e, c, d, s0, n, s_ref, f_ref)
    ) / (2 * e)
    assert elastogap.interface(s, v, c, d, s0, n, s_ref, f_ref) == pytest.approx(
        (ds, dv), rel=1e-5, abs=1e-8
    )


def test_elastogap_unmodified_and_clipped_curves():
    c, d = 40.0, 2.0
    assert elastogap.unmodified_force(0.1, 5.0, c, d, 0.05) == 0.0
    assert elastogap.unmodified_force(0.05, 5.0, c, d, 0.05) == 0.0
    assert elastogap.unmodified_force(-0.05, 5.0, c, d, 0.05, 1.5) == pytest.approx(
        -c * 0.1**1.5 + d * 5.0
    )
    assert elastogap.clipped_force(-0.05, 5.0, c, d, 0.05) == 0.0
    assert elastogap.clipped_force(-0.05, -5.0, c, d, 0.05) == pytest.approx(-c * 0.1 - d * 5.0)


@pytest.mark.parametrize(
    "x0, w0, g", [(0.01, -1.0, 0.0), (-0.01, -0.5, 0.0), (-0.01, 2.0, -1.0), (0.0, 0.0, -3.0)]
)
def test_elastogap_predict_matches_numerical_integration_of_the_law(x0, w0, g):
    k, d, mu = 500.0, 30.0, 1.2
    times = [0.02, 0.05, 0.1, 0.3]
    states, onset, changes = elastogap.predict(x0, w0, mu, g, times, k, d)
    # f = flange_b.f: the relative motion obeys mu*x'' = mu*g - f (f < 0 pushes the flanges apart)
    ref = simulate(lambda x, w: documented_force(x, w, k, d), x0, w0, mu, g, times)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-6)
        assert w == pytest.approx(wr, abs=1e-5)


# ---- ElastoGap (MSL 4.1 Translational.Components.ElastoGap documentation) ----------------------


def rate_along(law, s, v, a, dt=1e-7, side=0):
    """d/dt law(s(t), v(t)) for s(t) = s + v t + a t^2/2: central (side 0) or one-sided difference."""

    def f(t):
        return law(s + v * t + 0.5 * a * t * t, v + a * t)

    if side > 0:
        return (f(dt) - f(0.0)) / dt
    if side < 0:
        return (f(0.0) - f(-dt)) / dt
    return (f(dt) - f(-dt)) / (2 * dt)


def test_elastogap_defaults_are_the_documented_ones():
    """s_rel0 = 0, n = 1, s_ref = 1 (f_ref = c*s_ref) are MSL's defaults (MSL 4.1 ElastoGap parameters)."""
    c, d = 10.0, 2.0
    for s in (0.5, -0.1):
        for v in (-0.3, 0.2):
            f = documented_force(s, v, c, d)
            assert elastogap.force(s, v, c, d)[0] == pytest.approx(f, rel=1e-12, abs=1e-15)
            assert elastogap.unmodified_force(s, v, c, d) == pytest.approx(
                (-c * abs(s) + d * v) if s < 0 else 0.0, rel=1e-12, abs=1e-15
            )
            assert elastogap.clipped_force(s, v, c, d) == pytest.approx(
                min((-c * abs(s) + d * v) if s < 0 else 0.0, 0.0), rel=1e-12, abs=1e-15
            )
            rate = rate_along(lambda x, w: documented_force(x, w, c, d), s, v, 0.7)
            assert elastogap.force_rate(s, v, 0.7, c, d) == pytest.approx(rate, rel=1e-6, abs=1e-9)
            ds = (documented_force(s + 1e-8, v, c, d) - documented_force(s - 1e-8, v, c, d)) / 2e-8
            dv = (documented_force(s, v + 1e-8, c, d) - documented_force(s, v - 1e-8, c, d)) / 2e-8
            assert elastogap.interface(s, v, c, d) == pytest.approx((ds, dv), rel=1e-6, abs=1e-9)
    # the exponent alone: s_ref must default to 1 (f_ref = c*s_ref: n = 1 hides s_ref)
    f = documented_force(-0.1, 0.01, c, d, n=1.5)
    assert elastogap.force(-0.1, 0.01, c, d, n=1.5)[0] == pytest.approx(f, rel=1e-12)
    assert elastogap.unmodified_force(-0.1, 0.01, c, d, n=1.5) == pytest.approx(
        -c * 0.1**1.5 + d * 0.01, rel=1e-12
    )
    assert elastogap.clipped_force(-0.1, 0.01, c, d, n=1.5) == pytest.approx(
        -c * 0.1**1.5 + d * 0.01, rel=1e-12
    )
    rate = rate_along(lambda x, w: documented_force(x, w, c, d, n=1.5), -0.1, 0.01, 0.7)
    assert elastogap.force_rate(-0.1, 0.01, 0.7, c, d, n=1.5) == pytest.approx(rate, rel=1e-6)
    ds = (
        documented_force(-0.1 + 1e-8, 0.01, c, d, n=1.5)
        - documented_force(-0.1 - 1e-8, 0.01, c, d, n=1.5)
    ) / 2e-8
    assert elastogap.interface(-0.1, 0.01, c, d, n=1.5) == pytest.approx((ds, d), rel=1e-6)


@pytest.mark.parametrize("n, s_ref, f_ref", [(1.5, 1.0, 0.0), (1.0, 2.0, 7.0), (1.5, 0.5, 3.0)])
@pytest.mark.parametrize("v", [-0.5, -0.05, 0.0, 0.05, 0.5])
def test_elastogap_rate_and_derivatives_with_exponent_and_reference(n, s_ref, f_ref, v):
    """force_rate and interface are the time and partial derivatives of the MSL law (2.3) for
    n != 1 or s_ref != 1, in every damper regime (bounded to f_c, unbounded, bounded to -f_c)."""
    c, d, s, a = 10.0, 1.0, -0.1, 0.7

    def law(x, w):
        return documented_force(x, w, c, d, n=n, s_ref=s_ref, f_ref=f_ref)

    rate = rate_along(law, s, v, a)
    assert elastogap.force_rate(s, v, a, c, d, n=n, s_ref=s_ref, f_ref=f_ref) == pytest.approx(
        rate, rel=1e-6, abs=1e-9
    )
    ds = (law(s + 1e-8, v) - law(s - 1e-8, v)) / 2e-8
    dv = (law(s, v + 1e-8) - law(s, v - 1e-8)) / 2e-8
    assert elastogap.interface(s, v, c, d, n=n, s_ref=s_ref, f_ref=f_ref) == pytest.approx(
        (ds, dv), rel=1e-6, abs=1e-9
    )


def test_elastogap_rate_and_derivatives_on_the_clamp_bounds_are_the_unbounded_law():
    """At d*v_rel = f_c or = -f_c exactly, min(max(f_d2, f_c), -f_c) = f_d2 (MSL 4.1 ElastoGap equations): the
    unbounded law applies; its derivatives are the one-sided ones on the unbounded side."""
    c, d = 10.0, 2.0  # s_rel = -0.1: f_c = -1.0 exactly; v_rel = -+0.5: d*v_rel = -+1.0

    def law(x, w):
        return documented_force(x, w, c, d)

    assert (
        elastogap.force(-0.1, -0.5, c, d)[2] == -1.0 and elastogap.force(-0.1, 0.5, c, d)[2] == 1.0
    )
    # lower bound, a motion going into the unbounded region (f_d2 - f_c grows: d*a > c*v)
    assert elastogap.force_rate(-0.1, -0.5, 0.0, c, d) == pytest.approx(
        rate_along(law, -0.1, -0.5, 0.0, side=1), rel=1e-5
    )
    # upper bound, going into the unbounded region (f_d2 + f_c falls: d*a + c*v < 0)
    assert elastogap.force_rate(-0.1, 0.5, -5.0, c, d) == pytest.approx(
        rate_along(law, -0.1, 0.5, -5.0, side=1), rel=1e-5
    )
    dv_up = (law(-0.1, -0.5 + 1e-8) - law(-0.1, -0.5)) / 1e-8
    ds_up = (law(-0.1 - 1e-8, -0.5) - law(-0.1, -0.5)) / -1e-8
    assert elastogap.interface(-0.1, -0.5, c, d) == pytest.approx((ds_up, dv_up), rel=1e-6)
    dv_dn = (law(-0.1, 0.5) - law(-0.1, 0.5 - 1e-8)) / 1e-8
    ds_dn = (law(-0.1, 0.5) - law(-0.1 - 1e-8, 0.5)) / 1e-8
    assert elastogap.interface(-0.1, 0.5, c, d) == pytest.approx((ds_dn, dv_dn), rel=1e-6)


def elastogap_reference(x0, w0, mu, g, times, k, d):
    """solve_ivp of mu*x'' = mu*g - f(x, x') with f the MSL ElastoGap law (s_rel0 = 0, n = 1)."""

    def rhs(t, y):
        return [y[1], g - documented_force(y[0], y[1], k, d) / mu]

    sol = solve_ivp(
        rhs,
        (0, times[-1]),
        [x0, w0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-14,
        t_eval=times,
        max_step=times[-1] / 200,
    )
    return sol.y.T


@pytest.mark.parametrize(
    "x0, w0, g, times",
    [
        (-0.1, 0.0, -100.0, (0.02, 0.05, 0.1)),  # pushed in: unbounded damper, then bounded to f_c
        (0.0, -2.0, 0.0, (0.1, 0.3, 0.6, 1.2)),  # hit, rebound, fast separation (f = 0), lift-off
        (-0.05, 1.0, -3.0, (0.1, 0.3, 0.6, 1.2)),  # separating, decelerated back into contact
        (
            -0.05,
            1.0,
            -30.0,
            (0.05, 0.1, 0.3),
        ),  # fast separation (f = 0) turned back before lift-off
    ],
)
def test_elastogap_predict_follows_the_documented_law(x0, w0, g, times):
    """predict (closed form, regions of the law) against solve_ivp of the MSL law (2.3)."""
    k, d, mu = 10.0, 2.0, 1.0
    states, onset, changes = elastogap.predict(x0, w0, mu, g, times, k, d)
    ref = elastogap_reference(x0, w0, mu, g, times, k, d)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-8) and w == pytest.approx(wr, abs=1e-7)


def test_elastogap_predict_onset_and_changes_follow_the_contact_definition():
    """contact = s_rel < s_rel0 (strict, MSL 4.1 ElastoGap equations) and f = 0 unless the law transmits: onset is
    the first time f can be non-zero (0 if at the start, None if never), changes the region changes
    (docstring's table: LINEAR is closed, APPROACH and SEPARATE strict)."""
    k, d, mu = 10.0, 2.0, 1.0
    # at s_rel = s_rel0 moving in: not yet in contact, one change (into contact) right after
    states, onset, changes = elastogap.predict(0.0, -1.0, mu, 0.0, (0.01,), k, d)
    assert onset is not None and onset > 0.0 and changes == 1
    # free flight away: never in contact; x = x0 + w0 t
    states, onset, changes = elastogap.predict(0.5, 1.0, mu, 0.0, (1.0,), k, d)
    assert onset is None and changes == 0 and states[0] == pytest.approx((1.5, 1.0), rel=1e-14)
    # fast separation (d*w > -k*x: f_d bounded to -f_c, f = 0): no force, one change (lift-off at x = 0)
    states, onset, changes = elastogap.predict(-0.1, 5.0, mu, 0.0, (1.0,), k, d)
    assert onset is None and changes == 1 and states[0] == pytest.approx((4.9, 5.0), rel=1e-12)
    # fast approach (d*w < k*x): f = 2*k*x transmits from the start
    states, onset, changes = elastogap.predict(-0.1, -5.0, mu, 0.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0
    # on the LINEAR/APPROACH boundary (d*w = k*x = -1) going into LINEAR: no region change
    states, onset, changes = elastogap.predict(-0.1, -0.5, mu, 0.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0
    # on the LINEAR/SEPARATE boundary (d*w = -k*x = 1) going into LINEAR (g = -5): no region change
    states, onset, changes = elastogap.predict(-0.1, 0.5, mu, -5.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0


def test_elastogap_predict_of_a_motion_that_overflows_gives_nan_states_at_once():
    """segments.follow: a penetration near the largest float, x = -1.8e308
    m, w = -999 m/s, k = d = 1, mu = 0.26 kg, under g = -7.6e4 m/s2: the motion overflows in the
    linear region, and the prediction gives non-finite states from there on, at once. It used to go
    on through nan segments of 5e-324 s until the EventStorm bound (1e6 motion evaluations, 1.45 s
    of CPU in an FMU step of 1e-5 s)."""
    start = motion.work()
    out, onset, changes = elastogap.predict(
        -1.7976931348623157e308, -999.0, 0.2594469473972287, -75717.8, (1e-5, 2e-5), 1.0, 1.0
    )
    assert motion.work() - start < 1000  # measured 126
    assert len(out) == 2 and all(math.isnan(x) and math.isnan(w) for x, w in out)
    assert onset == 0.0
