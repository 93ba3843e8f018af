"""Tests written to kill the mutants of src/contactfmu/physics that survived the other tests
(mutation testing: mutation/run.py, report mutation/REPORT.md). Every expected value is derived
independently of the code under test: closed-form solutions, a matrix exponential (scipy) of the
linear ODE, scipy's integrators, or the documented law written out again here."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq

from contactfmu.mechanics import contact_motion as cm
from contactfmu.components.ElastoGap import law as elastogap
from contactfmu.components.EndStop import law as endstop
from contactfmu.components.EndStop import prediction as endstop_prediction
from contactfmu.components.TranslationalHardstop import law as hardstop
from contactfmu.mechanics import linear
from contactfmu.mechanics import ode
from contactfmu.mechanics import rigid
from contactfmu.components.Sine import law as sources
from contactfmu.components.Force import law as force_law
from contactfmu.components.MassWithStopAndFriction import law as msf
from test_hardstop import documented as hardstop_law   # the MapleSim law, written out in the tests


# ---- linear, rigid, sources ---------------------------------------------------------------------

def test_linear_laws_written_out():
    assert linear.relative_motion(1.5, -2.0, 4.0, 3.0) == (2.5, 5.0)
    assert linear.spring_force(0.3, 2.0, 0.1) == pytest.approx(2.0 * 0.2)
    assert linear.damper_force(-3.0, 7.0) == -21.0
    assert linear.force_rate(2.0, 5.0, 3.0, 7.0) == 3.0 * 2.0 + 7.0 * 5.0
    assert linear.spring_damper_force(0.5, 2.0, 3.0, 7.0, 0.2) == pytest.approx(3.0 * 0.3 + 7.0 * 2.0)


def test_rigid_advance_is_exact_for_a_linearly_varying_force():
    """Integrate s''' = jerk exactly: the polynomial solution of constant jerk."""
    assert rigid.acceleration(4.0, 10.0) == 2.5
    s0, v0, a0, j, h = 0.3, -1.2, 2.0, 6.0, 0.7
    s, v = rigid.advance(s0, v0, a0, h, j)
    sol = solve_ivp(lambda t, y: [y[1], y[2], j], (0, h), [s0, v0, a0], rtol=1e-12, atol=1e-14)
    assert s == pytest.approx(sol.y[0, -1], rel=1e-10)
    assert v == pytest.approx(sol.y[1, -1], rel=1e-10)
    assert rigid.advance(s0, v0, a0, h) == pytest.approx((s0 + v0 * h + a0 * h * h / 2, v0 + a0 * h))


def test_sine_source_and_its_derivative():
    A, f, ph, off, t0 = 2.0, 3.0, 0.4, 0.5, 0.25
    assert sources.sine(0.1, A, f, ph, off, t0) == off
    assert sources.sine(t0, A, f, ph, off, t0) == pytest.approx(off + A * math.sin(ph))
    t = 0.6
    assert sources.sine(t, A, f, ph, off, t0) == pytest.approx(off + A * math.sin(2 * math.pi * f * (t - t0) + ph))
    e = 1e-6
    numeric = (sources.sine(t + e, A, f, ph, off, t0) - sources.sine(t - e, A, f, ph, off, t0)) / (2 * e)
    assert sources.sine_derivative(t, A, f, ph, t0) == pytest.approx(numeric, rel=1e-7)
    assert sources.sine_derivative(0.1, A, f, ph, t0) == 0.0
    assert sources.sine_derivative(t0, A, f, ph, t0) == pytest.approx(A * 2 * math.pi * f * math.cos(ph))
    assert force_law.force_source_flange_force(3.5) == -3.5


# ---- contact_motion: closed-form pieces against the matrix exponential ---------------------------

def reference_state(x0, w0, mu, g, c, d, xe, t):
    """mu*x'' = mu*g - c*(x - xe) - d*x' by the matrix exponential of the augmented system."""
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    z = expm(a * t) @ np.array([x0, w0, 1.0])
    return z[0], z[1]


PIECES = [  # (x0, w0, mu, g, c, d, xe): free, damper, falling damper, over-, under-, critically damped
    (0.3, -1.0, 2.0, 0.7, 0.0, 0.0, 0.0),
    (0.3, -1.0, 2.0, 0.7, 0.0, 3.0, 0.0),
    (0.3, -1.0, 2.0, 0.7, 0.0, -0.5, 0.0),
    (0.3, -1.0, 2.0, 0.7, 4.0, 12.0, 0.1),
    (0.3, -1.0, 2.0, 0.7, 8.0, 1.0, -0.2),
    (0.3, -1.0, 2.0, 0.7, 2.0, 4.0, 0.05),      # sigma = 1 = omega0
]


@pytest.mark.parametrize("args", PIECES)
@pytest.mark.parametrize("t", [0.0, 0.013, 0.4, 1.7])
def test_piece_state_matches_the_matrix_exponential(args, t):
    piece = cm.Piece(*args)
    x, w = piece.state(t)
    xr, wr = reference_state(*args, t)
    assert x == pytest.approx(xr, rel=1e-9, abs=1e-12)
    assert w == pytest.approx(wr, rel=1e-9, abs=1e-12)
    assert piece.acceleration(x, w) == pytest.approx(args[3] - (args[4] * (x - args[6]) + args[5] * w) / args[2])


def test_piece_kinds():
    assert cm.Piece(0, 0, 2.0, 0, 4.0, 12.0).kind == "over"
    assert cm.Piece(0, 0, 2.0, 0, 8.0, 1.0).kind == "under"
    assert cm.Piece(0, 0, 2.0, 0, 2.0, 4.0).kind == "critical"
    assert cm.Piece(0, 0, 2.0, 0, 0.0, 1.0).kind == "damper"
    assert cm.Piece(0, 0, 2.0, 0).kind == "free"


def test_growing_piece_overflows_to_nan():
    piece = cm.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)
    assert piece.state(1.0) == pytest.approx((math.e - 1.0, math.e))
    x, w = piece.state(1e4)
    assert math.isnan(x) and math.isnan(w)
    # a stable piece is never nan: it decays
    x, w = cm.Piece(0.0, 1.0, 1.0, 0.0, 0.0, 1.0).state(1e4)
    assert x == pytest.approx(1.0) and w == pytest.approx(0.0, abs=1e-300)


def reference_grid(args, n, horizon):
    """(t, x, w) on n + 1 equidistant times in [0, horizon]: one matrix exponential, repeated."""
    x0, w0, mu, g, c, d, xe = args
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    step = expm(a * horizon / n)
    z = np.empty((n + 1, 3))
    z[0] = (x0, w0, 1.0)
    for i in range(n):
        z[i + 1] = step @ z[i]
    return np.linspace(0.0, horizon, n + 1), z[:, 0], z[:, 1]


def derivative_signs(args, alpha, beta, ts, grid=None):
    if grid is not None:
        xs, ws = grid
    else:
        xs, ws = np.transpose([reference_state(*args, t) for t in ts])
    a = args[3] - (args[4] * (xs - args[6]) + args[5] * ws) / args[2]
    return alpha * ws + beta * a


@pytest.mark.parametrize("args", PIECES)
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (0.0, 1.0), (2.0, 0.3)])
def test_turning_points_are_the_zeros_of_the_derivative(args, alpha, beta):
    horizon = 3.0
    times = list(cm.Piece(*args).turning_points(alpha, beta, horizon))
    ts, xs, ws = reference_grid(args, 6000, horizon)
    ts, xs, ws = ts[1:-1], xs[1:-1], ws[1:-1]
    f = derivative_signs(args, alpha, beta, ts, (xs, ws))
    expected = [brentq(lambda t: derivative_signs(args, alpha, beta, [t])[0], ts[i], ts[i + 1], xtol=1e-14)
                for i in np.nonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0)[0]]
    assert len(times) >= len(expected)
    found = [t for t in times if derivative_signs(args, alpha, beta, [t])[0] ** 2 < 1e-16]
    assert found == pytest.approx(expected, abs=1e-7)
    assert all(0.0 < t < horizon for t in times) and times == sorted(times)


def test_periodic_turning_points_are_lazy_and_in_the_horizon():
    assert list(cm._periodic(-0.5, 1.0, 3.0)) == [0.5, 1.5, 2.5]
    assert list(cm._periodic(0.0, 1.0, 2.0)) == [1.0]


@pytest.mark.parametrize("args", PIECES)
@pytest.mark.parametrize("alpha, beta, level, inside", [(1.0, 0.0, 0.05, 1), (0.0, 1.0, -1.5, 1),
                                                         (1.0, 0.5, 0.0, -1), (1.0, 0.0, 0.35, -1)])
def test_first_crossing_is_the_first_zero(args, alpha, beta, level, inside):
    horizon = 2.5

    def value(t):
        x, w = reference_state(*args, t)
        return inside * (alpha * x + beta * w - level)

    ts, xs, ws = reference_grid(args, 5000, horizon)
    vals = inside * (alpha * xs + beta * ws - level)
    tc = cm.first_crossing(cm.Piece(*args), alpha, beta, level, inside, horizon)
    assert vals[0] >= 0
    out = np.nonzero(vals < 0)[0]
    if len(out) == 0:
        assert tc is None
        return
    i = out[0]
    expected = brentq(value, ts[i - 1], ts[i], xtol=1e-15)
    assert tc == pytest.approx(expected, abs=1e-9)
    assert value(tc) <= 1e-9


def test_bisection_on_the_float_bits_finds_the_first_float():
    t_star = 0.3 + 1e-17 * 0   # first float > 0.3
    first = math.nextafter(0.3, 1.0)
    assert cm._bisect(lambda t: t > 0.3, 0.0, 1.0) == first
    assert cm._bisect(lambda t: t >= 1e-200, 0.0, 1.0) == pytest.approx(1e-200, rel=1e-15)
    assert cm._float(cm._bits(t_star)) == t_star


def test_reduced_mass_stiffness_and_planning():
    assert cm.reduced_mass(2.0, 3.0) == pytest.approx(6.0 / 5.0)
    assert cm.reduced_mass(0.0, 3.0) == 3.0
    assert cm.reduced_mass(2.0, 0.0) == 2.0
    assert cm.reduced_mass(0.0, 0.0) is None
    assert cm.stiffness_number(2.0, 0.1, 800.0, 30.0) == pytest.approx(0.1 * 20.0)
    assert cm.stiffness_number(2.0, 0.1, 800.0, 50.0) == pytest.approx(0.1 * 25.0)
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.5, 0.1) == pytest.approx((0.5, (3.0 - 1.0) / 0.5 + 4.0 / 2.0))
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.0, 0.1) == (0.1, 0.0)


def test_deadbeat_acceleration_reaches_the_target_two_steps_ahead():
    x0, w0, x2, w2, h = 0.2, -1.0, 0.05, 0.4, 0.01
    a1 = cm.deadbeat_acceleration(x0, w0, x2, w2, h)
    x1, w1 = x0 + w0 * h + 0.5 * a1 * h * h, w0 + a1 * h
    a2 = (w2 - w1) / h                       # the acceleration that gives w2 at 2h
    assert x1 + w1 * h + 0.5 * a2 * h * h == pytest.approx(x2, rel=1e-9)


def test_couple_free_and_contact():
    """A motion that stays free transmits nothing; one that hits within the step gets the force
    that brings the bodies to the law's state two steps ahead."""
    def predict(x, w, state, times):
        return hardstop.predict(x, w, 1.0, 0.0, times, 0.2, 1e4, 10.0)

    f, shadow = cm.couple(0.0, 0.5, 1.0, 0.0, 1e-3, None, predict, False)
    assert (f, shadow) == (0.0, None)
    x, w, h = 0.0995, 1.0, 1e-3
    f, shadow = cm.couple(x, w, 1.0, 0.0, h, None, predict, False)
    assert shadow == (x, w, 0, None)
    (x1, w1), (x2, w2) = predict(x, w, None, (h, 2 * h))[0]
    a = (x2 - x - 1.5 * h * w - 0.5 * h * w2) / (h * h)
    assert f == pytest.approx(-a, rel=1e-9)
    shadow2, pred = cm.advance_shadow(shadow, h, predict)
    assert shadow2[:2] == pytest.approx(predict(x, w, None, (h,))[0][0])
    assert cm.advance_shadow(None, h, predict) == (None, None)


def test_skip_series_sums_and_largest():
    assert cm._largest(lambda m: m <= 37) == 37
    assert cm._largest(lambda m: m <= 0) == 0
    assert cm._largest(lambda m: m <= 1) == 1
    assert cm._largest(lambda m: True) == 2 ** 62
    assert cm._expm1(1.0) == pytest.approx(math.e - 1.0)
    assert cm._expm1(701.0) == math.inf
    # cycle j takes contact + q/(u*rho^j): durations summed directly
    u, rho, contact, q = 2.0, 0.9, 0.01, 0.05
    dur, factor, changes = cm._skip_exact(u, rho, contact, q, 0.5, 2)
    m = round(math.log(factor) / math.log(rho))
    direct = sum(contact + q / (u * rho ** j) for j in range(m))
    assert dur == pytest.approx(direct, rel=1e-12)
    assert changes == 2 * m
    assert sum(contact + q / (u * rho ** j) for j in range(m + 1)) <= 0.5
    assert sum(contact + q / (u * rho ** j) for j in range(m + 2)) > 0.5
    dur, factor, changes = cm._skip_exact(u, 1.0, contact, q, 0.5, 2)
    assert factor == 1.0 and dur == pytest.approx(changes / 2 * (contact + q / u))
    assert cm._skip_exact(u, 1.1, contact, q, 0.5, 2) is None
    assert cm._skip_exact(u, 0.5, contact, q, 0.01, 2) is None


def test_close():
    assert cm._close(1.0, 1.0 + 1e-9) and not cm._close(1.0, 1.0 + 1e-7)


# ---- hardstop and elastogap laws -----------------------------------------------------------------


@pytest.mark.parametrize("s", [-0.3, -0.1, -0.05, 0.0, 0.05, 0.1, 0.3])
@pytest.mark.parametrize("b", [0.2, 2e-10, 3e-10, 0.0])
def test_hardstop_law_rate_and_interface(s, b):
    c, d, v, a = 50.0, 3.0, 0.7, -2.0
    f, contact = hardstop.force(s, v, b, c, d)
    assert f == pytest.approx(hardstop_law(s, v, b, c, d))
    if b > 2e-10:
        assert contact == (1 if s > b / 2 else -1 if s < -b / 2 else 0)
    else:
        assert contact == (1 if s > 0 else -1 if s < 0 else 0)
    engaged = not (b > 2e-10 and -b / 2 <= s <= b / 2)
    assert hardstop.force_rate(s, v, a, b, c, d) == (c * v + d * a if engaged else 0.0)
    assert hardstop.interface(s, b, c, d) == ((c, d) if engaged else (0.0, 0.0))


def test_hardstop_region_on_the_boundaries():
    h = 0.1
    assert hardstop._region(0.2, 0.0, 0.0, h) == hardstop.UPPER
    assert hardstop._region(h, 1.0, 0.0, h) == hardstop.UPPER
    assert hardstop._region(h, 0.0, 1.0, h) == hardstop.UPPER
    assert hardstop._region(h, 0.0, -1.0, h) == hardstop.FREE
    assert hardstop._region(h, -1.0, 5.0, h) == hardstop.FREE
    assert hardstop._region(-h, -1.0, 0.0, h) == hardstop.LOWER
    assert hardstop._region(-h, 0.0, -1.0, h) == hardstop.LOWER
    assert hardstop._region(-h, 0.0, 1.0, h) == hardstop.FREE
    assert hardstop._region(-h, 1.0, -5.0, h) == hardstop.FREE
    assert hardstop._region(-0.2, 0.0, 0.0, h) == hardstop.LOWER
    assert hardstop._region(0.0, 0.0, 0.0, h) == hardstop.FREE


def simulate(law, x0, w0, mu, g, times, t_max_step=1e-4):
    sol = solve_ivp(lambda t, y: [y[1], g - law(y[0], y[1]) / mu], (0.0, times[-1]), [x0, w0], t_eval=times,
                    rtol=1e-11, atol=1e-13, max_step=t_max_step, method="DOP853")
    return list(zip(sol.y[0], sol.y[1]))


@pytest.mark.parametrize("x0, w0, g", [(0.0, 1.0, 0.0), (0.0, -1.0, 3.0), (0.09, 0.0, 2.0), (0.15, 0.2, -1.0)])
def test_hardstop_predict_matches_numerical_integration_of_the_law(x0, w0, g):
    b, c, d, mu = 0.2, 2e3, 4.0, 1.5
    times = [0.05, 0.1, 0.2, 0.35]
    states, onset, changes = hardstop.predict(x0, w0, mu, g, times, b, c, d)
    ref = simulate(lambda x, w: hardstop_law(x, w, b, c, d), x0, w0, mu, g, times)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-6)
        assert w == pytest.approx(wr, abs=1e-5)
    # the onset: the first time |x| reaches b/2 in the reference
    ts = np.linspace(0, 0.35, 3501)
    ref_dense = simulate(lambda x, w: hardstop_law(x, w, b, c, d), x0, w0, mu, g, list(ts))
    inside = [i for i, (x, w) in enumerate(ref_dense) if abs(x) > b / 2 - 1e-12]
    if inside:
        assert ts[inside[0]] - 1e-4 <= onset <= ts[inside[0]] + 1e-9
        assert changes >= 1
    else:
        assert onset is None and changes == 0


def test_hardstop_predict_without_gap_is_the_spring_damper():
    states, onset, changes = hardstop.predict(0.01, 0.5, 2.0, 1.0, [0.1, 0.3], 0.0, 100.0, 3.0)
    assert (onset, changes) == (0.0, 0)
    for t, (x, w) in zip([0.1, 0.3], states):
        assert (x, w) == pytest.approx(reference_state(0.01, 0.5, 2.0, 1.0, 100.0, 3.0, 0.0, t), rel=1e-9)


def elastogap_law(s, v, c, d, s0=0.0, n=1.0, s_ref=1.0, f_ref=None):
    if not s < s0:
        return 0.0
    f_ref = c * s_ref if f_ref is None else f_ref
    fc = -f_ref * (abs(s - s0) / s_ref) ** n
    fd = d * v
    fd = max(fd, fc)
    fd = min(fd, -fc)
    return fc + fd


@pytest.mark.parametrize("n, f_ref, s_ref", [(1.0, None, 1.0), (1.5, None, 0.5), (2.0, 7.0, 0.2)])
@pytest.mark.parametrize("s, v", [(0.1, -1.0), (-0.02, 0.01), (-0.02, -100.0), (-0.02, 100.0), (-0.3, 0.5),
                                  (0.05, 0.0)])
def test_elastogap_law_its_rate_and_its_derivatives(n, f_ref, s_ref, s, v):
    c, d, s0, a = 40.0, 2.0, 0.05, 3.0
    f, fc, fd, contact = elastogap.force(s, v, c, d, s0, n, s_ref, f_ref)
    assert f == pytest.approx(elastogap_law(s, v, c, d, s0, n, s_ref, f_ref), rel=1e-12, abs=1e-300)
    assert contact == (s < s0)
    assert fc + fd == pytest.approx(f)
    if contact:
        fr = c * s_ref if f_ref is None else f_ref
        assert fc == pytest.approx(-fr * ((s0 - s) / s_ref) ** n)
    if s == s0:                    # the kink at the start of contact: f = 0 and no derivative checked
        assert elastogap.force_rate(s, v, a, c, d, s0, n, s_ref, f_ref) == 0.0
        assert elastogap.interface(s, v, c, d, s0, n, s_ref, f_ref) == (0.0, 0.0)
        return
    e = 1e-7
    numeric_rate = (elastogap_law(s + v * e, v + a * e, c, d, s0, n, s_ref, f_ref)
                    - elastogap_law(s - v * e, v - a * e, c, d, s0, n, s_ref, f_ref)) / (2 * e)
    assert elastogap.force_rate(s, v, a, c, d, s0, n, s_ref, f_ref) == pytest.approx(numeric_rate, rel=1e-5, abs=1e-8)
    ds = (elastogap_law(s + e, v, c, d, s0, n, s_ref, f_ref) - elastogap_law(s - e, v, c, d, s0, n, s_ref, f_ref)) / (2 * e)
    dv = (elastogap_law(s, v + e, c, d, s0, n, s_ref, f_ref) - elastogap_law(s, v - e, c, d, s0, n, s_ref, f_ref)) / (2 * e)
    assert elastogap.interface(s, v, c, d, s0, n, s_ref, f_ref) == pytest.approx((ds, dv), rel=1e-5, abs=1e-8)


def test_elastogap_unmodified_and_clipped_curves():
    c, d = 40.0, 2.0
    assert elastogap.unmodified_force(0.1, 5.0, c, d, 0.05) == 0.0
    assert elastogap.unmodified_force(0.05, 5.0, c, d, 0.05) == 0.0
    assert elastogap.unmodified_force(-0.05, 5.0, c, d, 0.05, 1.5) == pytest.approx(-c * 0.1 ** 1.5 + d * 5.0)
    assert elastogap.clipped_force(-0.05, 5.0, c, d, 0.05) == 0.0
    assert elastogap.clipped_force(-0.05, -5.0, c, d, 0.05) == pytest.approx(-c * 0.1 - d * 5.0)


@pytest.mark.parametrize("x0, w0, g", [(0.01, -1.0, 0.0), (-0.01, -0.5, 0.0), (-0.01, 2.0, -1.0), (0.0, 0.0, -3.0)])
def test_elastogap_predict_matches_numerical_integration_of_the_law(x0, w0, g):
    k, d, mu = 500.0, 30.0, 1.2
    times = [0.02, 0.05, 0.1, 0.3]
    states, onset, changes = elastogap.predict(x0, w0, mu, g, times, k, d)
    # f = flange_b.f: the relative motion obeys mu*x'' = mu*g - f (f < 0 pushes the flanges apart)
    ref = simulate(lambda x, w: elastogap_law(x, w, k, d), x0, w0, mu, g, times)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-6)
        assert w == pytest.approx(wr, abs=1e-5)


# ---- ode: one Dormand-Prince step against the tableau of the literature ---------------------------

DP_C = [0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1]
DP_A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
        [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
DP_B5 = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]
DP_B4 = [5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def dp_step(f, t, y, h):
    """Dormand & Prince (1980), RK5(4)7M: (5th-order solution, 5th - 4th order difference)."""
    y = np.asarray(y, float)
    k = []
    for i in range(7):
        k.append(np.asarray(f(t + DP_C[i] * h, y + h * sum(a * kj for a, kj in zip(DP_A[i], k))), float))
    y5 = y + h * sum(b * kj for b, kj in zip(DP_B5, k))
    y4 = y + h * sum(b * kj for b, kj in zip(DP_B4, k))
    return y5, y5 - y4


SYSTEMS = [  # (rhs, y0): 1, 2 (the two-state fast path) and 3 states; nonlinear and time dependent
    (lambda t, y: [y[0] * math.cos(t)], [1.3]),
    (lambda t, y: [y[1], -4.0 * y[0] - 0.3 * y[1] + math.sin(3 * t)], [0.5, -0.2]),
    (lambda t, y: [y[1], y[2], -y[0] * y[1] + t], [0.1, 0.2, -0.3]),
]


@pytest.mark.parametrize("rhs, y0", SYSTEMS)
def test_one_accepted_step_is_the_dormand_prince_step_and_the_next_step_follows_the_controller(rhs, y0):
    t0, h = 0.2, 0.3
    y5, e = dp_step(rhs, t0, y0, h)
    sc = 1e-3 * np.maximum(np.abs(y0), np.abs(y5))           # atol 0: err = max |e|/(rtol*max|y|)
    err = np.max(np.abs(e) / sc)
    rtol = float(err / 0.5) * 1e-3                            # chosen so that err = 0.5
    t, y, ev, h_next = ode.integrate(rhs, t0, y0, t0 + h, rtol=rtol, atol=0.0, h=h)
    assert t == t0 + h and ev is None
    assert y == pytest.approx(list(y5), rel=1e-13, abs=1e-15)
    assert h_next == pytest.approx(h * 0.9 * 0.5 ** -0.2, rel=1e-9)


def test_step_size_controller_limits_and_rejection():
    rhs, y0 = SYSTEMS[1]
    h = 0.3
    y5, e = dp_step(rhs, 0.0, y0, h)
    err = np.max(np.abs(e) / np.maximum(np.abs(y0), np.abs(y5)))
    # a tiny error: the next step grows by 5 at most (and max_step caps it)
    _, _, _, h_next = ode.integrate(rhs, 0.0, y0, h, rtol=1.0, atol=1.0, h=h)
    assert h_next == pytest.approx(5 * h)
    _, _, _, h_next = ode.integrate(rhs, 0.0, y0, h, rtol=1.0, atol=1.0, h=h, max_step=0.4)
    assert h_next == 0.4
    # err = 4 rejects the first step: it is retried with h*0.9*4**-0.2, and the result is that of the
    # steps taken then (the integration still ends exactly at t_end)
    rtol = float(err / 4.0)
    t, y, ev, _ = ode.integrate(rhs, 0.0, y0, h, rtol=rtol, atol=0.0, h=h)
    h1 = h * 0.9 * 4.0 ** -0.2
    y1, _ = dp_step(rhs, 0.0, y0, h1)
    assert t == h
    ref = solve_ivp(rhs, (0, h), y0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    assert y != pytest.approx(list(y5), rel=1e-12)           # not the rejected step's result
    assert y == pytest.approx(list(ref), rel=1e-3)
    # rtol very large would never reject: the initial step then comes from the state's scale
    t, y, ev, h_next = ode.integrate(lambda t, y: [1.0], 0.0, [2.0], 1.0)
    assert t == 1.0 and y == pytest.approx([3.0])


def test_hermite_interpolant_is_exact_for_cubics():
    p = np.poly1d([0.7, -1.1, 0.3, 2.0])
    dp = p.deriv()
    t0, t1 = 0.4, 1.3
    for t in (0.4, 0.55, 1.0, 1.3):
        assert ode._hermite(t0, [p(t0)], [dp(t0)], t1, [p(t1)], [dp(t1)], t)[0] == pytest.approx(p(t), rel=1e-13)


def test_crossing_directions():
    assert ode._crosses(-1.0, 0.0, 1) and ode._crosses(-1.0, 1.0, 0) and not ode._crosses(-1.0, 1.0, -1)
    assert ode._crosses(1.0, 0.0, -1) and ode._crosses(1.0, -1.0, 0) and not ode._crosses(1.0, -1.0, 1)
    assert not ode._crosses(0.0, 1.0, 1) and not ode._crosses(0.0, -1.0, -1)
    assert not ode._crosses(1.0, 2.0, 0) and not ode._crosses(-1.0, -2.0, 0)


@pytest.mark.parametrize("direction, expected", [(1, math.asin(0.3)), (-1, math.pi - math.asin(0.3)),
                                                  (0, math.asin(0.3))])
def test_event_located_on_a_known_crossing(direction, expected):
    """y = sin(t): y - 0.3 rises through 0 at asin(0.3) and falls at pi - asin(0.3)."""
    ev = ode.Event(lambda t, y: y[0] - 0.3, direction, "level")
    t, y, hit, _ = ode.integrate(lambda t, y: [y[1], -y[0]], 0.0, [0.0, 1.0], 5.0, [ev], rtol=1e-12, atol=1e-14)
    assert hit is ev and hit.name == "level" and hit.direction == direction
    assert t == pytest.approx(expected, abs=1e-10)
    assert y == pytest.approx([math.sin(expected), math.cos(expected)], abs=1e-9)


def test_integrate_edge_cases():
    f = lambda t, y: [y[0]]
    assert ode.integrate(f, 1.0, [2.0], 1.0, h=0.1) == (1.0, [2.0], None, 0.1)
    t, y, ev, h = ode.integrate(lambda t, y: [math.inf], 0.0, [1.0], 1.0)
    assert t == 0.0 and y == [math.inf] and ev is None
    t, y, ev, h = ode.integrate(lambda t, y: [math.nan * 0 + 1.0, math.inf], 0.0, [1.0, 1.0], 1.0)
    assert math.isnan(y[0]) and y[1] == math.inf
    with pytest.raises(ode.StepBudgetExceeded):
        ode.integrate(f, 0.0, [1.0], 10.0, budget=[3], rtol=1e-12, atol=1e-14)
    budget = [1000]
    ode.integrate(f, 0.0, [1.0], 1.0, budget=budget)
    assert 0 < budget[0] < 1000
    # an overflowing solution ends at once with a non-finite state
    t, y, ev, h = ode.integrate(lambda t, y: [y[0] * y[0]], 0.0, [1.0], 2.0)
    assert not math.isfinite(y[0]) and t <= 2.0
    # an event exactly at 0 at the start does not trigger again unless it crosses
    ev = ode.Event(lambda t, y: y[0], 0)
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [ev])
    assert hit is None and t == 1.0
    ev = ode.Event(lambda t, y: y[0], -1)
    t, y, hit, _ = ode.integrate(lambda t, y: [-1.0], 0.0, [0.0], 1.0, [ev])
    assert hit is ev and t < 1e-10


# ---- MassWithStopAndFriction ----------------------------------------------------------------------

def test_msf_parameters_and_friction_law():
    p = msf.Parameters(m=2.0, L=0.4, smax=3.0, smin=-1.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, fexp=3.0)
    assert (p.lo, p.hi) == (pytest.approx(-0.8), pytest.approx(2.8))
    assert p.f0 == 10.0 and p.f0_max == pytest.approx(10.01)
    assert not p.has_no_friction()
    assert msf.Parameters(F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0).has_no_friction()
    assert not msf.Parameters(F_prop=0.1, F_Coulomb=0.0, F_Stribeck=0.0).has_no_friction()
    assert msf.sliding_friction(p, 0.7, True) == pytest.approx(0.5 * 0.7 + 4.0 + 6.0 * math.exp(-3.0 * 0.7))
    assert msf.sliding_friction(p, -0.7, False) == pytest.approx(-0.5 * 0.7 - 4.0 - 6.0 * math.exp(-3.0 * 0.7))
    assert msf.stopped_flag(p, -0.8) == -1 and msf.stopped_flag(p, 2.8) == 1 and msf.stopped_flag(p, 0.0) == 0
    assert msf.start_checks(p, 0.0, 0.0) is None
    assert msf.start_checks(p, -0.8, 0.0) is None and msf.start_checks(p, 2.8, 0.0) is None
    assert "smin" in msf.start_checks(p, -0.9, 0.0)
    assert "v = -1.0" in msf.start_checks(p, -0.8, -1.0)
    assert "smax" in msf.start_checks(p, 2.9, 0.0)
    assert "v = 1.0" in msf.start_checks(p, 2.8, 1.0)
    assert "s - L/2 = -1.1" in msf.start_checks(p, -0.9, 0.0)


def test_msf_settle_and_outputs():
    p = msf.Parameters(m=2.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, smin=-1.0, smax=1.0)
    S, Fw, B, Fr = msf.STUCK, msf.FORWARD, msf.BACKWARD, msf.FREE
    assert msf.settle(p, 0.0, 1.0, S, 0.0) == (Fw, False, False)
    assert msf.settle(p, 0.0, -1.0, S, 0.0) == (B, False, False)
    assert msf.settle(p, 0.0, 0.0, S, 10.02) == (Fw, True, False)
    assert msf.settle(p, 0.0, 0.0, S, -10.02) == (B, False, True)
    assert msf.settle(p, 0.0, 0.0, S, 10.005) == (S, False, False)
    assert msf.settle(p, 0.0, 0.0, Fw, 10.005) == (Fw, True, False)
    assert msf.settle(p, 0.0, 0.0, B, -10.005) == (B, False, True)
    assert msf.settle(p, 0.0, 0.0, Fw, 9.9) == (S, False, False)
    assert msf.settle(p, 1.0, 0.0, S, 20.0) == (S, False, False)      # at the right stop
    assert msf.settle(p, -1.0, 0.0, S, -20.0) == (S, False, False)
    assert msf.settle(p, 1.0, 0.0, Fw, 10.005) == (S, False, False)
    free = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0, smin=-1.0, smax=1.0)
    assert msf.settle(free, 0.0, 0.0, S, 0.0) == (Fr, False, False)
    assert msf.settle(free, 1.0, 0.0, S, 0.0) == (S, False, False)
    assert msf.outputs(p, 0.0, 0.0, S, 3.0) == (0.0, 3.0, 3.0)
    assert msf.outputs(free, 0.0, 0.0, Fr, 3.0) == (1.5, 0.0, 1.5)
    a, f, sa = msf.outputs(p, 0.0, 0.0, Fw, 12.0)
    assert (a, f, sa) == pytest.approx(((12.0 - 10.0) / 2.0, 10.0, (12.0 - 10.0) / 2.0 + 10.01))
    a, f, sa = msf.outputs(p, 0.0, 0.0, B, -12.0)
    assert (a, f, sa) == pytest.approx(((-12.0 + 10.0) / 2.0, -10.0, (-12.0 + 10.0) / 2.0 - 10.01))
    a, f, sa = msf.outputs(p, 0.0, 0.3, Fw, 12.0)
    fr = 0.5 * 0.3 + 4.0 + 6.0 * math.exp(-2.0 * 0.3)
    assert (a, f) == pytest.approx(((12.0 - fr) / 2.0, fr))


def test_msf_coulomb_slide_stops_at_the_analytic_time_and_holds():
    """F_prop = F_Stribeck = 0: constant deceleration F_Coulomb/m; stops at v0*m/F_C, s = v0^2*m/(2 F_C)."""
    p = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=3.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.1, v=1.5)
    assert body.initialize(0.0) == msf.FORWARD
    body.step(0.0, 2.0, 0.0)
    assert body.mode == msf.STUCK and body.v == 0.0
    assert body.s == pytest.approx(0.1 + 1.5 ** 2 * 2.0 / (2 * 3.0), rel=1e-9)
    assert body.events[-1][1] == "stuck (v = 0)"
    assert body.events[-1][0] == pytest.approx(1.5 * 2.0 / 3.0, abs=1e-9)


def test_msf_stribeck_slide_matches_solve_ivp():
    p = msf.Parameters(m=1.5)
    body = msf.Body(p, s=0.0, v=-0.5)
    body.initialize(0.0)
    F0, dF = 30.0, -4.0
    body.step(0.0, 0.2, F0, dF)

    def rhs(t, y):
        v = y[1]
        f = p.F_prop * v - p.F_Coulomb - p.F_Stribeck * math.exp(-p.fexp * abs(v))
        return [v, (F0 + dF * t - f) / p.m]

    def stuck(t, y):
        return y[1]
    stuck.terminal, stuck.direction = True, 1
    ref = solve_ivp(rhs, (0, 0.2), [0.0, -0.5], method="DOP853", rtol=1e-12, atol=1e-14, events=stuck)
    assert body.events[0][1] == "stuck (v = 0)"
    assert body.events[0][0] == pytest.approx(ref.t_events[0][0], abs=1e-9)
    # F(t) = 30 - 4t > f0_max at once: breakaway forward at the same instant, then forward sliding
    assert body.events[1][1] == "breakaway forward"
    assert body.mode == msf.FORWARD and body.v > 0.0


def test_msf_breakaway_when_a_ramp_reaches_f0_max():
    p = msf.Parameters(m=1.0)
    body = msf.Body(p)
    body.initialize(0.0)
    body.step(0.0, 1.0, 2.0, 10.0)     # F = 2 + 10 t reaches f0_max = 15.015 at t = 1.3015: no breakaway yet
    assert body.mode == msf.STUCK and body.events == []
    body.step(1.0, 1.0, 12.0, 10.0)
    assert body.events[0][1] == "breakaway forward"
    assert body.events[0][0] == pytest.approx(1.0 + (p.f0_max - 12.0) / 10.0, abs=1e-12)
    body = msf.Body(p)
    body.initialize(0.0)
    body.step(0.0, 1.0, -2.0, -20.0)
    assert body.events[0][1] == "breakaway backward"
    assert body.events[0][0] == pytest.approx((p.f0_max - 2.0) / 20.0, abs=1e-12)


@pytest.mark.parametrize("v0, side", [(2.0, "right stop"), (-2.0, "left stop")])
def test_msf_free_body_hits_a_stop_at_the_analytic_time(v0, side):
    p = msf.Parameters(m=1.0, L=0.2, smax=1.0, smin=-1.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.0, v=v0)
    assert body.initialize(0.0) == msf.FREE
    body.step(0.0, 1.0, 0.0)
    assert body.events[-1][1] == side + " impact"
    assert body.events[-1][0] == pytest.approx(0.9 / 2.0, abs=1e-10)
    assert body.s == pytest.approx(0.9 if v0 > 0 else -0.9) and body.v == 0.0 and body.mode == msf.STUCK
    # pushed into the stop: held; pulled away: free again (F/m)
    body.step(1.0, 0.5, 3.0 if v0 > 0 else -3.0)
    assert body.s == pytest.approx(0.9 if v0 > 0 else -0.9) and body.v == 0.0


def test_msf_free_body_under_a_force_ramp_is_the_polynomial():
    p = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.5, v=0.1)
    body.initialize(0.0)
    body.step(0.0, 0.8, 3.0, 1.5)
    t = 0.8
    assert body.s == pytest.approx(0.5 + 0.1 * t + (3.0 * t ** 2 / 2 + 1.5 * t ** 3 / 6) / 2.0, rel=1e-9)
    assert body.v == pytest.approx(0.1 + (3.0 * t + 1.5 * t ** 2 / 2) / 2.0, rel=1e-9)


# ==== contact_motion's envelope skip and its Coupler (EndStop's own tests: tests/components/EndStop/) ====


# ---- contact_motion: the envelope skip of follow() -------------------------------------------------

def test_skip_envelope_of_a_bouncing_rattle():
    """A cycle of duration proportional to its speed (a ball bouncing under g: tau = 2*u/g), the speed
    ratio rho per cycle: cycle j takes tau1*rho^(j+1), leaves at u*rho^(j+2)."""
    rho, u, tau0 = 0.999, 2.0, 0.4
    tau1 = tau0 * rho
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau1, 100.0, 2)
    m = changes // 2
    assert m == int(math.log1p(cm.ENVELOPE_STEP) / -math.log(rho))       # at most ENVELOPE_STEP of speed
    assert factor == pytest.approx(rho ** m, rel=1e-12)
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # limited by the span: S(m + 1) <= span < S(m + 2)
    span = 1.5
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau1, span, 3)
    m = changes // 3
    assert sum(tau1 * rho ** (j + 1) for j in range(m + 1)) <= span < sum(tau1 * rho ** (j + 1) for j in range(m + 2))
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # a duration growing with a decreasing speed (tau ~ 1/speed: q = 1/rho)
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau0 / rho, 100.0, 2)
    m = changes // 2
    assert dt == pytest.approx(sum(tau0 / rho * rho ** -(j + 1) for j in range(m)), rel=1e-10)


def test_skip_envelope_periodic_and_refused():
    tau = 0.3
    dt, factor, changes = cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 10.0, 2)
    assert factor == 1.0 and changes == 2 * 32 and dt == pytest.approx(32 * tau)    # 33*0.3 <= 10 < 34*0.3
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau * 1.001, 10.0, 2) is None      # not periodic
    assert cm._skip_envelope(1.0, 0.99, 1.0, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 0.99, tau, tau, 10.0, 2) is None              # ratio 1 then < 1
    assert cm._skip_envelope(1.0, 0.9, 0.99, tau, tau, 10.0, 2) is None              # drifting ratio
    assert cm._skip_envelope(1.0, 0.99, 1.01, tau, tau, 10.0, 2) is None             # gaining speed
    assert cm._skip_envelope(1.0, 0.0, 0.99, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, 0.0, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, tau, 0.0, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 0.5, 2) is None                # no whole cycle fits
    # just within the drift tolerance: 0.1*(1 - rho1)
    assert cm._skip_envelope(1.0, 0.9905, 0.99, tau, tau * 0.99, 10.0, 2) is not None


# ---- contact_motion: the Coupler in a co-simulation ------------------------------------------------

def cosimulate(x0, v0, b, c, d, force, h, n, default_h=None, mu=1.0):
    """A body (mass mu) on a Hardstop at a fixed frame, driven by a constant force, each step with
    the force the Coupler holds (integrated exactly: constant acceleration)."""
    coupler = cm.Coupler(mu, default_h or h)

    def predict(x, w, g, state, times):
        return hardstop.predict(x, w, mu, g, times, b, c, d)

    def stiff(step):
        return cm.stiffness_number(mu, step, c, d) > 1.0

    x, v, out = x0, v0, []
    for _ in range(n):
        f = coupler.force(x, v, predict, stiff)
        a = (force - f) / mu
        x, v = x + v * h + 0.5 * a * h * h, v + a * h
        coupler.commit(h, predict)
        out.append((x, v, f))
    return out


@pytest.mark.parametrize("default_h", [None, 1e-3])
@pytest.mark.parametrize("x0", [0.095, 0.099])
def test_coupler_elastic_bounce_returns_the_speed(default_h, x0):
    """An undamped spring stop (c = 1e4 N/m, 1 kg: contact time pi/100 s, resolved by 10 ms steps):
    the body leaves with the speed it came with, and the element transmits nothing in free flight;
    also when the first step is 10 times longer than the one planned (default_h)."""
    b, c, h = 0.2, 1e4, 1e-2
    out = cosimulate(x0, 1.0, b, c, 0.0, 0.0, h, 12, default_h)
    assert out[-1][1] == pytest.approx(-1.0, rel=1e-9)
    assert out[-1][2] == 0.0
    # free flight after the release: x = 0.1 - (t - t_release), t_release = hit + pi/100
    t = 12 * h
    t_release = (0.1 - x0) / 1.0 + math.pi / 100.0
    assert out[-1][0] == pytest.approx(0.1 - (t - t_release), abs=h)
    # the total impulse of the element is the momentum change 2*mu*v
    assert sum(f for _, _, f in out) * h == pytest.approx(2.0, rel=1e-9)


def test_coupler_holds_a_pushed_body_at_the_static_deflection():
    """A constant force of 10 N pushes the body into a damped stop: the held force becomes 10 N at
    the static deflection F/c past the stop."""
    b, c, d, h = 0.2, 1e4, 100.0, 1e-3
    out = cosimulate(0.1, 0.0, b, c, d, 10.0, h, 3000)
    x, v, f = out[-1]
    assert f == pytest.approx(10.0, rel=1e-6)
    assert x == pytest.approx(0.1 + 10.0 / c, abs=1e-6)
    assert v == pytest.approx(0.0, abs=1e-9)


def test_coupler_stiff_stop_is_plastic():
    """The documented defaults c = d = 1e10 against 1 kg: an overdamped stop the step cannot
    resolve (stiff): the body stops at the stop without rebound or penetration."""
    b, c, d, h = 0.2, 1e10, 1e10, 1e-3
    out = cosimulate(0.09, 1.0, b, c, d, 0.0, h, 40)
    x, v, f = out[-1]
    assert v == pytest.approx(0.0, abs=1e-6)
    assert x == pytest.approx(0.1, abs=1e-6)
    assert max(x for x, _, _ in out) <= 0.1 + 1e-6
    assert sum(f for _, _, f in out) * h == pytest.approx(1.0, rel=1e-6)


# ---- contact_motion: couple and advance_shadow against the documented rules ------------------------

def hardstop_predictor(b=0.2, c=1e4, d=10.0, mu=1.0):
    def predict(x, w, state, times):
        return hardstop.predict(x, w, mu, 0.0, times, b, c, d)
    return predict


def endstop_law(p, mu, g):
    """The EndStop FMU's wrapper: the law's discrete state (stop, sf) rides along."""
    def predict(x, w, state, times):
        pred = endstop_prediction.predict(x, w, state[0], state[1], mu, g, times, p)
        return [(xs, ws, (st, sf)) for xs, ws, st, sf in pred.states], pred.onset, pred.changes, pred
    return predict


def test_advance_shadow_counts_free_steps_and_lets_go_after_two():
    h, predict = 1e-3, hardstop_predictor()
    # free (far from both stops at x = +-0.1): the free count grows; after two free steps no shadow
    shadow, pred = cm.advance_shadow((0.0, 1.0, 0, None), h, predict)
    assert shadow == (pytest.approx(h), 1.0, 1, None) and pred[1] is None
    assert cm.advance_shadow((0.0, 1.0, 1, None), h, predict)[0] is None
    # in contact (x beyond 0.1, moving in): the count restarts at 0
    shadow, pred = cm.advance_shadow((0.105, 1.0, 1, None), h, predict)
    assert shadow[2] == 0 and pred[1] == 0.0
    assert shadow[1] < 1.0                           # decelerated by the stop
    # the law's discrete state is passed in and carried on: a rigid stop holding the body
    p = endstop.Parameters(mode=endstop.RIGID, l1=0.0, l2=1.0)
    shadow, pred = cm.advance_shadow((0.0, 0.0, 1, (endstop.STOP1, 0)), h, endstop_law(p, 2.0, 3.0))
    assert shadow == (0.0, 0.0, 0, (endstop.STOP1, 0))


def test_couple_starts_the_shadow_only_for_a_force_within_one_and_a_half_steps():
    h, predict = 1e-3, hardstop_predictor()
    # hits at 1.8 h (after 2 h in the stop): no force yet, no shadow
    assert cm.couple(0.1 - 1.8e-3, 1.0, 1.0, 0.0, h, None, predict, False) == (0.0, None)
    # hits at 1.2 h: the shadow starts, F from the law's state two steps ahead (deadbeat)
    x, w = 0.1 - 1.2e-3, 1.0
    f, shadow = cm.couple(x, w, 1.0, 0.0, h, None, predict, False)
    assert shadow == (x, w, 0, None)
    (_, _), (x2, w2) = predict(x, w, None, (h, 2 * h))[0]
    assert f == pytest.approx(-(x2 - x - 1.5 * h * w - 0.5 * h * w2) / h ** 2, rel=1e-9)


def test_couple_with_a_shadow_in_contact_matches_the_velocity_and_about_to_hit_the_state():
    h, mu, predict = 1e-3, 2.0, hardstop_predictor(mu=2.0)
    # the shadow is in contact from the start (onset 0): F gives the bodies the shadow's velocity
    # after one step (impulse-consistent), whatever the bodies' own (slightly different) state
    shadow = (0.103, -0.4, 0, None)
    (x1, w1), _ = predict(0.103, -0.4, None, (h, 2 * h))[0]
    f, s = cm.couple(0.1031, -0.41, mu, 0.0, h, shadow, predict, False)
    assert s == shadow
    assert f == pytest.approx(mu * (0.0 - (w1 - -0.41) / h), rel=1e-9)
    # the shadow is free and hits within the two steps: deadbeat to its state at 2 h
    shadow = (0.0995, 1.0, 1, None)
    _, (x2, w2) = predict(0.0995, 1.0, None, (h, 2 * h))[0]
    x, w = 0.0996, 0.98
    f, _ = cm.couple(x, w, mu, 0.0, h, shadow, predict, False)
    assert f == pytest.approx(-mu * (x2 - x - 1.5 * h * w - 0.5 * h * w2) / h ** 2, rel=1e-9)
    # the EndStop's state: a rigid stop at stop 1 holding the body against g > 0 transmits mu*g
    p = endstop.Parameters(mode=endstop.RIGID, l1=0.0, l2=1.0)
    f, s = cm.couple(0.0, 0.0, mu, 3.0, h, (0.0, 0.0, 0, (endstop.STOP1, 0)), endstop_law(p, mu, 3.0), True)
    assert f == pytest.approx(mu * 3.0, rel=1e-12)


@pytest.mark.parametrize("stiff", [False, True])
def test_couple_free_shadow_transmits_exactly_nothing(stiff):
    """A shadow that stays free over both steps, bodies on it: the force is exactly 0 (not a
    rounding residue), under any held acceleration."""
    h, mu, g = 1e-3, 0.7, 3.3
    b = 0.2

    def predict(x, w, state, times):
        return hardstop.predict(x, w, mu, g, times, b, 1e4, 10.0)

    for x, w in [(0.0123456, 0.987654), (-0.031, -0.77), (0.05, 1e-3), (0.0, 0.0)]:
        f, s = cm.couple(x, w, mu, g, h, (x, w, 1, None), predict, stiff)
        assert f == 0.0
    # a bodies' motion off the shadow's by 1e-9 m/s gets the force that corrects it
    x, w = 0.0123456, 0.987654
    f, _ = cm.couple(x, w + 1e-9, mu, g, h, (x, w, 1, None), predict, stiff)
    # (velocity matching: mu*dv/h; deadbeat: the extra 1.5*h*dv of travel to take back over h^2)
    assert f == pytest.approx(mu * 1e-9 / h * (1.5 if stiff else 1.0), rel=1e-4)


def test_reduced_mass_of_light_bodies():
    assert cm.reduced_mass(0.5, 0.25) == pytest.approx(1.0 / 6.0)
    assert cm.reduced_mass(0.5, 0.0) == 0.5 and cm.reduced_mass(0.0, 0.25) == 0.25


