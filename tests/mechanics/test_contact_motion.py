"""contact_motion's prediction of a body's motion on a contact law,
src/contactfmu/mechanics/contact_motion.py: the closed-form pieces (Piece), their turning points,
first_crossing and the bisection on float bits, the small numeric helpers, the cycle-skipping
series (_skip_exact, _skip_envelope, _cycles, phi2) and follow (a body between stops, a rattle).

Every expected value is independent of the module: the exact solution of
mu*x'' = mu*g - c*(x - xe) - d*x' by the matrix exponential (scipy.linalg.expm) or its characteristic
roots written out here, brentq on those, plain event-by-event loops of the analytic contact map of a
linear stop (contact time pi/omega, exit speed times exp(-sigma*pi/omega)), the Taylor series of phi2
in exact rational arithmetic, IEEE-754 facts, or a statement of the docstring of the function tested
(its contract). Fast: no FMU, no slow rattles.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from motion_reference import reference_state
from scipy.linalg import expm
from scipy.optimize import brentq

from contactfmu.mechanics import contact_motion as cm

# ---- references written out ---------------------------------------------------------------------


def exact(x0, w0, mu, g, c, d, xe, t):
    """(x, w) of mu*x'' = mu*g - c*(x - xe) - d*x' at t: matrix exponential of the augmented system."""
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    z = expm(a * t) @ np.array([x0, w0, 1.0])
    return float(z[0]), float(z[1])


def accel(args, x, w):
    x0, w0, mu, g, c, d, xe = args
    return g - (c * (x - xe) + d * w) / mu


# (x0, w0, mu, g, c, d, xe) of every kind of piece
FREE = (0.3, -1.0, 2.0, 0.7, 0.0, 0.0, 0.0)


DAMPER = (0.3, -1.0, 2.0, 0.7, 0.0, 3.0, 0.0)


DAMPER_D1 = (0.3, -1.0, 2.0, 0.7, 0.0, 1.0, 0.0)  # d = 1 exactly


FALLING = (0.3, -1.0, 2.0, 0.7, 0.0, -0.5, 0.0)  # negative damping


OVER = (0.3, -1.0, 2.0, 0.7, 4.0, 12.0, 0.1)


OVER_SMALL = (0.3, -1.0, 1.0, 0.7, 2.0, 3.0, 0.1)  # sigma^2 - omega0^2 = 0.25 (< 1)


UNDER = (0.3, -1.0, 2.0, 0.7, 8.0, 1.0, -0.2)


UNDER_SMALL = (0.3, -1.0, 1.0, 0.7, 2.0, 2.6, 0.1)  # sigma^2 - omega0^2 = -0.31 (> -1)


UNDER_WEAK = (0.3, -1.0, 1.0, 0.7, 0.5, 0.2, 0.1)  # c = 0.5 < 1


CRITICAL = (0.3, -1.0, 2.0, 0.7, 2.0, 4.0, 0.05)  # sigma = 1 = omega0


UNDAMPED = (0.3, -1.0, 2.0, 0.7, 8.0, 0.0, -0.2)


ALL = [
    FREE,
    DAMPER,
    DAMPER_D1,
    FALLING,
    OVER,
    OVER_SMALL,
    UNDER,
    UNDER_SMALL,
    UNDER_WEAK,
    CRITICAL,
    UNDAMPED,
]


# ---- Piece ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", ALL)
@pytest.mark.parametrize("t", [0.0, 0.013, 0.4, 1.7, -0.3])
def test_piece_state_is_the_exact_solution(args, t):
    """Piece.state(t) = the exact solution of mu*x'' = mu*g - c*(x - xe) - d*x' (matrix exponential),
    at any t (the closed form also holds before t = 0)."""
    x, w = cm.Piece(*args).state(t)
    xr, wr = exact(*args, t)
    assert x == pytest.approx(xr, rel=1e-10, abs=1e-13)
    assert w == pytest.approx(wr, rel=1e-10, abs=1e-13)


def test_piece_over_at_the_time_where_the_root_difference_times_t_is_one():
    """Overdamped piece with r1 - r2 = -1 (sigma^2 - omega0^2 = 1/4): exact at t = -1 (dr*t = 1)."""
    args = (0.3, -1.0, 1.0, 0.7, 2.0, 3.0, 0.1)  # sigma = 1.5, root = 0.5, dr = -1
    x, w = cm.Piece(*args).state(-1.0)
    xr, wr = exact(*args, -1.0)
    assert (x, w) == pytest.approx((xr, wr), rel=1e-10)


def test_piece_defaults_are_free_flight():
    """Piece(x0, w0, mu, g): c = d = xe = 0, free flight x0 + w0 t + g t^2/2."""
    x, w = cm.Piece(0.3, -1.0, 2.0, 0.7).state(1.5)
    assert (x, w) == pytest.approx((0.3 - 1.5 + 0.35 * 1.5**2, -1.0 + 0.7 * 1.5), rel=1e-14)
    x, w = cm.Piece(0.3, -1.0, 2.0, 0.7, 8.0, 1.0).state(0.9)  # xe = 0 by default
    assert (x, w) == pytest.approx(exact(0.3, -1.0, 2.0, 0.7, 8.0, 1.0, 0.0, 0.9), rel=1e-10)


@pytest.mark.parametrize("args", ALL)
def test_piece_acceleration_is_the_law(args):
    """Piece.acceleration(x, w) = g - (c*(x - xe) + d*w)/mu (the class docstring)."""
    x, w = 0.17, -0.4
    assert cm.Piece(*args).acceleration(x, w) == pytest.approx(
        accel(args, x, w), rel=1e-14, abs=1e-15
    )


def test_growing_piece_overflows_to_nan_and_a_stable_one_to_its_value():
    """Piece.state docstring: a growing solution (d < 0) that overflows is (nan, nan); a huge finite
    free flight stays its value (inf where the value exceeds the float range)."""
    piece = cm.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)  # w = e^t, x = e^t - 1
    assert piece.state(1.0) == pytest.approx((math.e - 1.0, math.e), rel=1e-14)
    assert all(math.isnan(v) for v in piece.state(720.0))  # e^720 overflows
    assert all(math.isnan(v) for v in piece.state(1e5))  # expm1 raises OverflowError
    x, w = cm.Piece(0.0, 1e300, 1.0, 0.0).state(1e10)  # free flight, d = 0: not growing
    assert x == math.inf and w == 1e300
    x, w = cm.Piece(0.0, 1e300, 1.0, 0.0, 0.0, 0.5).state(1e10)  # decaying damper: not growing
    assert x == pytest.approx(1e300 / 0.5, rel=1e-12) and w == pytest.approx(0.0, abs=1e-200)


def test_growing_piece_with_an_infinite_term_is_nan():
    """Piece.state docstring: a growing piece (d < 0) whose x or w overflows to inf without an
    exception is (nan, nan): w = w0 e^(-k t), x = w0 (e^(-k t) - 1)/(-k) (k = d/mu < 0)."""
    x, w = cm.Piece(0.0, 1e306, 1.0, 0.0, 0.0, -1e-3).state(1000.0)  # x = 1.7e309: inf, w finite
    assert math.isnan(x) and math.isnan(w)
    x, w = cm.Piece(0.0, 1e307, 1.0, 0.0, 0.0, -10.0).state(0.29)  # w = 1.8e308: inf, x finite
    assert math.isnan(x) and math.isnan(w)
    x, w = cm.Piece(0.0, 1e306, 1.0, 0.0, 0.0, -1e-3).state(1.0)  # both finite: the values
    assert x == pytest.approx(1e306 * math.expm1(1e-3) / 1e-3, rel=1e-12)
    assert w == pytest.approx(1e306 * math.exp(1e-3), rel=1e-12)


# ---- turning points ------------------------------------------------------------------------------


def derivative(args, alpha, beta, t):
    """d/dt (alpha*x + beta*w) of the exact motion."""
    x, w = exact(*args, t)
    a = accel(args, x, w)
    x0, w0, mu, g, c, d, xe = args
    jerk = -(c * w + d * a) / mu
    return alpha * w + beta * a, alpha * a + beta * jerk


@pytest.mark.parametrize("args", ALL)
@pytest.mark.parametrize(
    "alpha, beta", [(1.0, 0.0), (0.0, 1.0), (2.0, 0.3), (1.0, -0.8), (-1.0, 0.05)]
)
def test_turning_points_are_all_the_zeros_of_the_derivative(args, alpha, beta):
    """turning_points docstring: the times in (0, horizon) where d/dt(alpha*x + beta*w) = 0, ascending
    (brentq on the exact motion between the sign changes of the derivative on a fine grid)."""
    horizon = 3.0
    times = list(cm.Piece(*args).turning_points(alpha, beta, horizon))
    ts, xs, ws = reference_grid(args, 3000, horizon)
    a = accel(args, xs, ws)
    ts, f = ts[1:-1], (alpha * ws + beta * a)[1:-1]
    expected = [
        brentq(lambda t: derivative(args, alpha, beta, t)[0], ts[i], ts[i + 1], xtol=1e-14)
        for i in np.nonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0)[0]
    ]
    assert times == pytest.approx(expected, abs=1e-8)
    assert all(0.0 < t < horizon for t in times)


def test_turning_points_horizon_cuts():
    """Only the turning points strictly inside (0, horizon): free flight from w0 = -1 under g = 0.5
    (x turns at t = 2), and an undamped oscillation (w turns every pi/omega)."""
    piece = cm.Piece(0.0, -1.0, 1.0, 0.5)
    assert list(piece.turning_points(1.0, 0.0, 3.0)) == [2.0]
    assert list(piece.turning_points(1.0, 0.0, 2.0)) == []
    assert list(piece.turning_points(1.0, 0.0, 1.0)) == []
    assert list(cm.Piece(0.0, 1.0, 1.0, 0.0).turning_points(1.0, 0.0, 5.0)) == []  # g = 0: no turn
    # w = cos(t) of x = sin(t) (c = mu = 1): w' = -sin(t) = 0 at pi, 2 pi
    times = list(cm.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0).turning_points(0.0, 1.0, 7.0))
    assert times == pytest.approx([math.pi, 2.0 * math.pi], rel=1e-14)
    # x' = cos(t) = 0 at pi/2 + k pi
    times = list(cm.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0).turning_points(1.0, 0.0, 5.0))
    assert times == pytest.approx([0.5 * math.pi, 1.5 * math.pi], rel=1e-14)


def test_turning_points_of_a_damper_and_of_an_overdamped_piece_without_a_turn():
    """A damper's velocity (alpha = 0) and position moving toward its limit speed never turn; an
    overdamped piece at rest in its equilibrium has a constant value (no turning point)."""
    assert list(cm.Piece(0.0, 1.0, 1.0, 2.0, 0.0, 1.0).turning_points(0.0, 1.0, 10.0)) == []
    assert list(cm.Piece(0.0, 1.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0)) == []
    assert (
        list(cm.Piece(0.0, 2.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0)) == []
    )  # w0 = winf
    assert list(cm.Piece(0.1, 0.0, 1.0, 0.0, 4.0, 12.0, 0.1).turning_points(1.0, 0.0, 10.0)) == []
    assert list(cm.Piece(0.1, 0.0, 1.0, 0.0, 1.0, 2.0, 0.1).turning_points(1.0, 0.3, 10.0)) == []


def test_turning_point_of_a_damper_under_a_force_reversing_the_motion():
    """Damper w' = g - k w from w0 = -1, g = 2, k = 1: x turns where w = 0, t = ln(1 + k/g*1)*... =
    ln((g - k w0)/g)/k = ln(1.5) (the analytic zero of w = winf + (w0 - winf) e^(-k t))."""
    times = list(cm.Piece(0.0, -1.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0))
    assert times == pytest.approx([math.log(1.5)], rel=1e-14)
    # a falling band (k = -1): w = -2 + (w0 + 2) e^t from w0 = -1.5: w = 0 at ln(4)
    times = list(cm.Piece(0.0, -1.5, 1.0, 2.0, 0.0, -1.0).turning_points(1.0, 0.0, 10.0))
    assert times == pytest.approx([math.log(4.0)], rel=1e-14)


def test_periodic_is_lazy_and_in_the_horizon():
    """_periodic docstring: first, first + period, ... in (0, horizon), lazily."""
    assert list(cm._periodic(-0.5, 1.0, 3.0)) == [0.5, 1.5, 2.5]
    assert list(cm._periodic(0.0, 1.0, 2.0)) == [1.0]
    assert list(cm._periodic(0.25, 1.0, 2.25)) == [0.25, 1.25]
    assert list(cm._periodic(0.25, 0.5, 1.0)) == [0.25, 0.75]
    assert list(cm._periodic(3.0, 1.0, 2.0)) == []
    gen = cm._periodic(0.5, 1e-12, 1e12)  # 1e24 values: only the first are made
    assert [next(gen) for _ in range(3)] == pytest.approx(
        [0.5, 0.5 + 1e-12, 0.5 + 2e-12], rel=1e-15
    )


# ---- first_crossing and the bisection on float bits ----------------------------------------------


@pytest.mark.parametrize("args", ALL)
@pytest.mark.parametrize(
    "alpha, beta, level, inside",
    [
        (1.0, 0.0, 0.05, 1),
        (0.0, 1.0, -1.5, 1),
        (1.0, 0.5, 0.0, -1),
        (1.0, 0.0, 0.35, -1),
        (0.0, 1.0, -0.2, -1),
        (1.0, 0.0, -0.4, 1),
        (2.0, -0.1, 0.8, -1),
    ],
)
def test_first_crossing_is_the_first_zero(args, alpha, beta, level, inside):
    """first_crossing docstring: the first time in (0, horizon] where inside*(alpha x + beta w - level)
    < 0, None if none (a fine grid of the exact motion, then brentq), and the earliest float outside."""
    horizon = 2.5

    def value(t):
        x, w = exact(*args, t)
        return inside * (alpha * x + beta * w - level)

    piece = cm.Piece(*args)
    tc = cm.first_crossing(piece, alpha, beta, level, inside, horizon)
    ts, xs, ws = reference_grid(args, 2500, horizon)
    vals = inside * (alpha * xs + beta * ws - level)
    out = np.nonzero(vals < -1e-12)[0]
    if len(out) == 0:
        assert tc is None
        return
    i = out[0]
    assert vals[:i].min() > 1e-9  # a clean crossing
    expected = brentq(value, ts[i - 1], ts[i], xtol=1e-15)
    assert tc == pytest.approx(expected, abs=1e-10)

    def computed(t):
        x, w = piece.state(t)
        return inside * (alpha * x + beta * w - level)

    assert computed(tc) < 0.0 <= computed(math.nextafter(tc, 0.0))


def test_first_crossing_on_the_horizon_and_inside_a_turn():
    """A crossing found at the horizon itself, and a crossing between two turning points that the
    end points of the interval do not show: x = sin(t) (c = mu = 1) leaves x <= 0.9 at asin(0.9)
    and comes back, the horizon 2 lies beyond."""
    piece = cm.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    tc = cm.first_crossing(piece, 1.0, 0.0, 0.9, -1, 2.0)
    assert tc == pytest.approx(math.asin(0.9), abs=1e-14)
    # free flight x = t leaves x <= 1 just after t = 1; the horizon is exactly 1: the float after 1
    # is beyond the horizon: None; horizon 1.5: the earliest float with x > 1
    free = cm.Piece(0.0, 1.0, 1.0, 0.0)
    assert cm.first_crossing(free, 1.0, 0.0, 1.0, -1, 1.0) is None
    assert cm.first_crossing(free, 1.0, 0.0, 1.0, -1, 1.5) == math.nextafter(1.0, 2.0)
    # x = t leaves x < 1 (inside = -1 on level 1 - ulp...) on the horizon 1 exactly: at 1
    assert cm.first_crossing(free, 1.0, 0.0, math.nextafter(1.0, 0.0), -1, 1.0) == 1.0
    # a level in w only (alpha = 0) with a position that is inf: the value is w alone
    assert cm.first_crossing(free, 0.0, 1.0, 1.0, -1, 5.0) is None


def test_first_crossing_with_a_nan_position_beyond_the_float_range():
    """nan (an overflowed growing motion) counts as outside (Piece.state docstring): x = e^t - 1
    never leaves x >= -1, but overflows after t = ln(max float) = 709.78."""
    piece = cm.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)
    tc = cm.first_crossing(piece, 1.0, 0.0, -1.0, 1, 1000.0)
    assert tc == pytest.approx(math.log(1.7976931348623157e308), rel=1e-6)
    # w alone (alpha = 0) of a motion whose x is inf: a free flight at 1e300 m/s for 1e10 s
    free = cm.Piece(0.0, 1e300, 1.0, 0.0)
    assert cm.first_crossing(free, 0.0, 1.0, 0.0, 1, 1e10) is None
    # x alone (beta = 0) of a motion whose w overflows at t = 1: w = 1e308*(1 + t), x = 1e308*(t + t^2/2)
    free = cm.Piece(0.0, 1e308, 1.0, 1e308)
    assert cm.first_crossing(free, 1.0, 0.0, -1.0, 1, 1.0) is None


def bit_bisection(outside, lo, hi):
    """Reference: the earliest float in (lo, hi] at which outside() holds (outside(lo) false,
    outside(hi) true), by halving the binary representation of the times to adjacent floats."""
    ilo, ihi = cm._bits(lo), cm._bits(hi)
    while ihi - ilo > 1:
        imid = (ilo + ihi) // 2
        if outside(cm._float(imid)):
            ihi = imid
        else:
            ilo = imid
    return cm._float(ihi)


def locate(f, lo, hi):
    """cm._locate with its evaluations: (float, [times probed])."""
    calls = []

    def counted(t):
        calls.append(t)
        return f(t)

    return cm._locate(counted, lo, hi, f(hi)), calls


@pytest.mark.parametrize("t_star", [0.3, 1e-200, 0.75, 123.456, 5e-324])
def test_locate_finds_the_earliest_float_outside(t_star):
    """_locate docstring: the earliest float in (lo, hi] at which not f >= 0."""
    assert locate(lambda t: t_star - t, 0.0, 1e3)[0] == math.nextafter(t_star, 1e3)
    assert locate(lambda t: 1.0 if t < t_star else -1.0, 0.0, 1e3)[0] == t_star
    # nan (an overflowed motion) is outside
    assert locate(lambda t: 1.0 if t < t_star else math.nan, 0.0, 1e3)[0] == t_star


def test_locate_with_a_start_after_zero_and_adjacent_ends():
    """_locate: (lo, hi] with lo > 0; adjacent lo, hi give hi; within 3*64 halvings."""
    assert locate(lambda t: 2.5 - t if t < 2.5 else -1.0, 2.0, 3.0)[0] == 2.5
    assert locate(lambda t: 2.5 - t, 2.0, 3.0)[0] == math.nextafter(2.5, 3.0)
    after = math.nextafter(1.0, 2.0)
    assert locate(lambda t: -1.0 if t > 1.0 else 0.0, 1.0, after)[0] == after
    found, calls = locate(lambda t: 1.0 if t < 1e-200 else -1.0, 0.0, 1.0)
    assert found == bit_bisection(lambda t: t >= 1e-200, 0.0, 1.0)
    assert len(calls) <= 3 * 64 + 1 and all(0.0 <= t < 1.0 for t in calls)


def test_locate_is_the_bit_bisection_of_monotone_functions_with_rounding_plateaus():
    """_locate docstring: any probe order that keeps the bracket ends on the float the bisection
    of the bits reaches, here for decreasing functions whose computed values are quantized (a
    plateau of exact zeros of a few to millions of floats at the boundary, as alpha*x - level of a
    motion near its guard), steep and flat, and it needs far fewer evaluations on smooth ones."""
    rng = np.random.default_rng(7)
    smooth = []
    for _ in range(400):
        lo = float(rng.choice([0.0, rng.uniform(0.0, 1e-3)]))
        hi = lo + float(10.0 ** rng.uniform(-12, 0))
        root = lo + (hi - lo) * float(rng.uniform(0.001, 0.999))
        slope = float(10.0 ** rng.uniform(-6, 6))
        quantum = float(rng.choice([0.0, 1e-18, 1e-12, 1e-6])) * slope
        curve = float(rng.uniform(0.0, 3.0))

        def f(t, root=root, slope=slope, quantum=quantum, curve=curve, lo=lo, hi=hi):
            value = slope * (root - t) * (1.0 + curve * (t - lo) / (hi - lo))
            return math.floor(value / quantum) * quantum if quantum else value

        if not f(lo) >= 0.0 or f(hi) >= 0.0:
            continue
        found, calls = locate(f, lo, hi)
        assert found == bit_bisection(lambda t: not f(t) >= 0.0, lo, hi)
        if not quantum:
            smooth.append(len(calls))
    assert len(smooth) > 50
    assert max(smooth) <= 16 and np.median(smooth) <= 10  # measured 11 and 9; bisection: 64


def test_earliest_crossing_is_the_first_of_the_guards_first_crossings():
    """earliest_crossing docstring: the guard the motion leaves first, ties to the earlier guard,
    as locating each guard on its own (first_crossing) and taking the first."""
    piece = cm.Piece(0.0, 1.0, 1.0, 0.0, 1e4, 5.0, 0.0)  # a ringing contact, x in [-0.01, 0.01]
    guards = [
        (1.0, 0.0, 0.008, -1),  # leaves x <= 0.008
        (0.0, 1.0, -0.5, 1),  # leaves w >= -0.5
        (1.0, 0.0, -0.002, 1),  # leaves x >= -0.002
        (0.0, 1.0, 0.999, -1),  # leaves w <= 0.999 (never: w starts at 1)
        (1.0, 0.0, 0.008, -1),  # the first guard again: a tie
    ]
    for order in ([0, 1, 2, 3, 4], [2, 1, 0], [1, 2], [4, 3, 2, 1, 0], [3]):
        chosen = [guards[i] for i in order]
        each = [cm.first_crossing(piece, *g, 0.05) for g in chosen]
        want = min(((t, i) for i, t in enumerate(each) if t is not None), default=None)
        assert cm.earliest_crossing(piece, chosen, 0.05) == want
    assert cm.earliest_crossing(piece, [guards[3]], 0.05) is None


def test_bits_and_float_are_the_ieee_754_representation():
    """_bits/_float: the IEEE-754 binary64 bit pattern as a signed 64-bit integer and back."""
    assert cm._bits(1.0) == 0x3FF0000000000000
    assert cm._bits(0.0) == 0
    assert cm._bits(5e-324) == 1
    assert cm._bits(-2.0) == -(1 << 63) + 0x4000000000000000
    assert cm._float(0x3FF0000000000000) == 1.0
    assert cm._float(1) == 5e-324
    assert cm._float(0x4000000000000001) == math.nextafter(2.0, 3.0)
    assert cm._float(-(1 << 63) + 0x4000000000000000) == -2.0


# ---- small helpers -------------------------------------------------------------------------------


def test_reduced_mass():
    """reduced_mass docstring: m_a m_b/(m_a + m_b); 0 is a fixed body; None if both are fixed."""
    assert cm.reduced_mass(2.0, 3.0) == pytest.approx(1.2, rel=1e-15)
    assert cm.reduced_mass(0.0, 3.0) == pytest.approx(3.0, rel=1e-15)
    assert cm.reduced_mass(2.0, 0.0) == pytest.approx(2.0, rel=1e-15)
    assert cm.reduced_mass(0.0, 0.0) is None
    assert cm.reduced_mass(0.5, 0.5) == pytest.approx(0.25, rel=1e-15)
    assert cm.reduced_mass(1e-3, 0.0) == pytest.approx(1e-3, rel=1e-15)
    assert cm.reduced_mass(0.0, 1e-3) == pytest.approx(1e-3, rel=1e-15)
    assert cm.reduced_mass(-1.0, -2.0) is None  # no positive mass: both fixed


def test_stiffness_number():
    """stiffness_number docstring: h times the fastest rate max(d/mu, sqrt(c/mu))."""
    assert cm.stiffness_number(2.0, 0.1, 800.0, 30.0) == pytest.approx(0.1 * 20.0, rel=1e-15)
    assert cm.stiffness_number(2.0, 0.1, 800.0, 50.0) == pytest.approx(0.1 * 25.0, rel=1e-15)
    assert cm.stiffness_number(4.0, 0.5, 4.0, 1.0) == pytest.approx(0.5 * 1.0, rel=1e-15)


def test_planning_step():
    """planning_step docstring: (last_h, (v - last_v)/last_h + last_F/mu), or (default_h, 0) before any step."""
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.5, 0.1) == pytest.approx(
        (0.5, 2.0 / 0.5 + 2.0), rel=1e-15
    )
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.0, 0.1) == (0.1, 0.0)
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, -1.0, 0.1) == (0.1, 0.0)


def test_deadbeat_acceleration():
    """deadbeat_acceleration docstring: a1 over [0, h], then a2 over [h, 2h], reach (x2, w2) at 2h."""
    x0, w0, x2, w2, h = 0.2, -1.0, 0.05, 0.4, 0.01
    a1 = cm.deadbeat_acceleration(x0, w0, x2, w2, h)
    a2 = (w2 - w0) / h - a1
    assert x0 + 2 * h * w0 + 1.5 * h * h * a1 + 0.5 * h * h * a2 == pytest.approx(x2, rel=1e-12)
    assert cm.deadbeat_acceleration(1.0, 0.0, 1.0, 0.0, 0.5) == 0.0
    assert cm.deadbeat_acceleration(0.0, 0.0, 1.0, 0.0, 1.0) == pytest.approx(1.0)


def test_close_is_relative():
    """_close: equal to a relative 1e-8 of the larger magnitude (_SAME)."""
    assert cm._close(1.0, 1.0 + 0.9e-8) and not cm._close(1.0, 1.0 + 1.1e-8)
    assert cm._close(-1.0, -1.0 - 0.9e-8) and not cm._close(-1.0, -1.0 - 1.1e-8)
    assert cm._close(1.0 + 0.99e-8, 1.0) and not cm._close(1.0 + 1.01e-8, 1.0)
    assert cm._close(0.0, 0.0) and not cm._close(0.0, 1e-300)
    assert cm._close(3.0, 3.0)


def test_expm1_and_largest():
    """_expm1: expm1, inf from 700 on; _largest docstring: the largest m >= 0 with ok(m), capped at 2**62."""
    assert cm._expm1(1.0) == pytest.approx(math.e - 1.0, rel=1e-15)
    assert cm._expm1(699.0) == pytest.approx(math.expm1(699.0), rel=1e-15)
    assert cm._expm1(700.0) == math.inf
    assert cm._expm1(-1e-20) == -1e-20
    for n in (0, 1, 2, 3, 4, 5, 7, 37, 64, 1000, 2**40 + 3):
        assert cm._largest(lambda m: m <= n) == n
    assert cm._largest(lambda m: True) == 2**62
    assert cm._largest(lambda m: m <= 2**62 - 5) == 2**62 - 5
    calls = []
    cm._largest(lambda m: calls.append(m) or m <= 1000)
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
    result = cm._skip_exact(u, rho, contact, q, span, 3)
    if m < 1:
        assert result is None
        return
    dur, factor, changes = result
    assert changes == 3 * m
    assert factor == pytest.approx(rho**m, rel=1e-12)
    assert dur == pytest.approx(sums[m], rel=1e-12)


def test_skip_exact_refuses_a_gaining_or_dead_cycle():
    """_skip_exact: rho > 1 (gaining) or rho <= 0: None (a passive law never gains speed)."""
    assert cm._skip_exact(2.0, 1.0000001, 0.01, 0.05, 5.0, 2) is None
    assert cm._skip_exact(2.0, 0.0, 0.01, 0.05, 5.0, 2) is None
    assert cm._skip_exact(2.0, -0.5, 0.01, 0.05, 5.0, 2) is None
    # exactly one cycle fits before the next would end past the span
    u, contact, q = 1.0, 0.1, 0.1
    span = 2 * (contact + q) + 1e-9  # rho = 1: S(2) <= span < S(3)
    assert cm._skip_exact(u, 1.0, contact, q, span, 2) == (pytest.approx(0.2), 1.0, 2)
    assert cm._skip_exact(u, 1.0, contact, q, 2 * (contact + q) - 1e-9, 2) is None


def test_skip_exact_of_a_very_slow_decay_is_summed_exactly():
    """rho = 1 - 1e-6 (not 1): the sum of cycles contact + q/(u rho^j) (direct sum), S(m+1) <= span."""
    rho, u, contact, q = 1.0 - 1e-6, 1.0, 0.001, 0.01
    dur, factor, changes = cm._skip_exact(u, rho, contact, q, 1.0, 2)
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
    m_cap = max(1, int(math.log(1.0 + cm.ENVELOPE_STEP) / -math.log(rho)))
    m = min(m_span, m_cap)
    result = cm._skip_envelope(7.0, rho, rho, tau0, tau1, span, 2)
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
    dt, factor, changes = cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 10.0, 2)
    assert (
        factor == 1.0 and changes == 2 * 32 and dt == pytest.approx(32 * tau, rel=1e-14)
    )  # 33 tau <= 10 < 34 tau
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau * (1 + 2e-8), 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau * (1 + 0.5e-8), 10.0, 2) is not None
    assert cm._skip_envelope(1.0, 0.99, 1.0, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 0.99, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.9, 0.99, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 1.01, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.0, 0.99, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.0, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, 0.0, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, tau, 0.0, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 0.5, 2) is None
    # the drift tolerance 0.1*(1 - rho1), from both sides
    assert cm._skip_envelope(1.0, 0.9909, 0.99, tau, tau * 0.99, 10.0, 2) is not None
    assert cm._skip_envelope(1.0, 0.9891, 0.99, tau, tau * 0.99, 10.0, 2) is not None
    assert cm._skip_envelope(1.0, 0.9911, 0.99, tau, tau * 0.99, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.9889, 0.99, tau, tau * 0.99, 10.0, 2) is None


def test_skip_envelope_of_a_fast_decay_skips_one_cycle():
    """rho = 0.5: the speed cap log(1.02)/log(2) < 1 still allows one cycle (max(1, ...))."""
    dt, factor, changes = cm._skip_envelope(1.0, 0.5, 0.5, 0.2, 0.1, 100.0, 4)
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
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, times, classify, law)
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
    out, onset, changes = cm.follow(0.1, 1.0, mu, 0.0, [0.01], classify, law)
    assert onset == 0.0 and changes == 0
    xr, wr = exact(0.1, 1.0, mu, 0.0, c, d, 0.1, 0.01)
    assert out[0] == pytest.approx((xr, wr), rel=1e-10)
    # free all along: no onset, no change, uniform motion
    out, onset, changes = cm.follow(0.0, 0.5, mu, 0.0, [0.1, 0.15], classify, law)
    assert onset is None and changes == 0
    assert out == [pytest.approx((0.05, 0.5)), pytest.approx((0.075, 0.5))]
    # the hit exactly at a requested time, then one more time in the stop
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, [0.1, 0.105], classify, law)
    assert onset == pytest.approx(0.1, rel=1e-14) and changes == 1
    assert out[0] == pytest.approx((0.1, 1.0), rel=1e-12)
    assert out[1] == pytest.approx(exact(0.1, 1.0, mu, 0.0, c, d, 0.1, 0.005), rel=1e-9)


@pytest.mark.parametrize(
    "d, times", [(0.6, [0.3, 2.0, 7.3, 7.31]), (2.0, [1.0, 4.0]), (0.0, [0.5, 6.0, 6.002])]
)
def test_follow_rattle_without_other_forces_is_the_event_by_event_contact_map(d, times):
    """follow docstring (g = 0): whole rattle cycles summed as a geometric series give the states of
    the event-by-event contact map written out (contact time pi/om, exit speed ratio
    exp(-sigma pi/om), flights across the gap), to rounding; the same number of changes."""
    half, mu, c = 0.01, 1.0, 1e6
    classify, law = two_stops(half, c, d, 0.0)
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, times, classify, law)
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
    assert ref_changes > cm.MAX_SEGMENTS
    with pytest.raises(cm.EventStorm, match=f"more than {cm.MAX_SEGMENTS} contact changes"):
        cm.follow(0.0, 1.0, mu, 0.0, times, classify, law, exact=True)
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, times, classify, law)
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
        out, onset, changes = cm.follow(x, w, 1.0, g, [0.1, 0.2, 0.3], classify, law)
        assert len(out) == 3 and all(math.isnan(a) and math.isnan(b) for a, b in out)
        assert changes == 0  # no motion predicted: no region change


def test_couple_of_overflowed_inputs_is_not_a_silent_zero_force():
    """follow/couple docstrings: overflowed inputs give non-finite results, which the FMU reports:
    the force couple computes from follow's prediction is not finite (never a silent F = 0)."""
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)

    def predict(x, w, state, times):
        return cm.follow(x, w, 1.0, 0.0, times, classify, law)

    for x, w in [(math.inf, 0.0), (0.0, math.nan), (1e308, 1e308)]:
        f, _ = cm.couple(x, w, 1.0, 0.0, 1e-3, None, predict, False)
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
    out, onset, changes = cm.follow(0.0, 1.0, mu, g, times, classify, law)
    ref, ref_changes = bouncing_reference(1.0, mu, c, d, g, times)
    assert ref_changes > cm.MAX_SEGMENTS
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
    assert cm._skip_exact(1.0, 1.0, 0.25, 0.25, 2.0, 2) == (1.5, 1.0, 6)
    # _skip_envelope, periodic: S(m) = m*tau1 = 0.5 m; span 2 = S(4): m = 3
    assert cm._skip_envelope(1.0, 1.0, 1.0, 0.5, 0.5, 2.0, 2) == (1.5, 1.0, 6)
    tau = 0.3
    assert cm._skip_envelope(1.0, 1.01, 1.01, tau, tau, 10.0, 2) is None  # gaining speed
    assert cm._skip_envelope(1.0, 1.5, 1.5, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.0, 0.05, tau, tau, 10.0, 2) is None  # speed ratio 0
    assert cm._skip_envelope(1.0, 0.05, 0.0, tau, 0.5 * tau, 10.0, 2) is None


# ---- corners -----------------------------------------------------------------------------------


def test_overdamped_piece_at_the_first_float_after_zero():
    """Piece.state: x = x0 + w0 t to first order; at t = 5e-324 where (r1 - r2)*t underflows to 0,
    x = w0*t = 1e300*5e-324 (the exact solution; overdamped, sigma^2 - omega0^2 = 0.0125)."""
    t = 5e-324
    x, w = cm.Piece(0.0, 1e300, 1.0, 0.0, 0.01, 0.3).state(t)
    assert x == pytest.approx(1e300 * t, rel=1e-12, abs=0.0)
    assert w == pytest.approx(1e300, rel=1e-12)


def test_no_turning_point_at_the_start_or_on_a_pure_mode():
    """turning_points docstring: times strictly inside (0, horizon): a free flight starting at rest
    under g turns at t = 0 only (none returned); x = e^(-2t) (c = 2, d = 3, mu = 1: roots -1, -2,
    started on the fast mode x0 = 1, w0 = -2) is monotone: none."""
    assert list(cm.Piece(0.0, 0.0, 1.0, 2.0).turning_points(1.0, 0.0, 5.0)) == []
    assert list(cm.Piece(1.0, -2.0, 1.0, 0.0, 2.0, 3.0).turning_points(1.0, 0.0, 10.0)) == []
    assert (
        list(cm.Piece(1.0, -1.0, 1.0, 0.0, 2.0, 3.0).turning_points(1.0, 0.0, 10.0)) == []
    )  # slow mode


@pytest.mark.parametrize("args", [OVER, OVER_SMALL, UNDER, CRITICAL, DAMPER])
@pytest.mark.parametrize("alpha, beta", [(2.0, 0.3), (1.0, -0.8), (0.0, 1.0)])
def test_turning_points_do_not_depend_on_the_scale_of_the_motion(args, alpha, beta):
    """Linearity: with g = 0 and xe = 0 the motion from s*(x0, w0) is s times the motion from
    (x0, w0): the same turning points for s = 1e-200 (products of such values underflow)."""
    x0, w0, mu, g, c, d, xe = args
    base = list(cm.Piece(x0, w0, mu, 0.0, c, d, 0.0).turning_points(alpha, beta, 5.0))
    small = list(
        cm.Piece(x0 * 1e-200, w0 * 1e-200, mu, 0.0, c, d, 0.0).turning_points(alpha, beta, 5.0)
    )
    assert small == pytest.approx(base, rel=1e-12)


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
    out, onset, changes = cm.follow(0.0, 1.0, mu, g, times, classify, law)
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
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, [t1, t2], counting, law)
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
    out, onset, changes = cm.follow(0.0, u, mu, g, [t_end], counting, law)
    n = math.floor(t_end / tau)
    s = t_end - n * tau
    assert out[0] == pytest.approx(
        (u * s + 0.5 * g * s * s, u + g * s), rel=2e-8
    )  # measured 2.3e-9
    assert changes == 2 * n
    m = math.floor((t_end - (cm.EXACT_CHANGES // 2) * tau) / tau) - 1
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
    out, onset, changes = cm.follow(0.0, 1.0, 1.0, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = cm.follow(0.0, 1.0, 1.0, 0.0, times, classify, law, exact=True)
    assert changes == ref_changes > 100 and onset == ref_onset
    for got, exp in zip(out, ref, strict=True):
        assert got == pytest.approx(exp, rel=1e-12, abs=1e-15)


# ---- Piece, turning points and first_crossing against the matrix exponential on a time grid -------

PIECES = [  # (x0, w0, mu, g, c, d, xe): free, damper, falling damper, over-, under-, critically damped
    (0.3, -1.0, 2.0, 0.7, 0.0, 0.0, 0.0),
    (0.3, -1.0, 2.0, 0.7, 0.0, 3.0, 0.0),
    (0.3, -1.0, 2.0, 0.7, 0.0, -0.5, 0.0),
    (0.3, -1.0, 2.0, 0.7, 4.0, 12.0, 0.1),
    (0.3, -1.0, 2.0, 0.7, 8.0, 1.0, -0.2),
    (0.3, -1.0, 2.0, 0.7, 2.0, 4.0, 0.05),  # sigma = 1 = omega0
]


@pytest.mark.parametrize("args", PIECES)
@pytest.mark.parametrize("t", [0.0, 0.013, 0.4, 1.7])
def test_piece_state_matches_the_matrix_exponential(args, t):
    piece = cm.Piece(*args)
    x, w = piece.state(t)
    xr, wr = reference_state(*args, t)
    assert x == pytest.approx(xr, rel=1e-9, abs=1e-12)
    assert w == pytest.approx(wr, rel=1e-9, abs=1e-12)
    assert piece.acceleration(x, w) == pytest.approx(
        args[3] - (args[4] * (x - args[6]) + args[5] * w) / args[2]
    )


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
    expected = [
        brentq(lambda t: derivative_signs(args, alpha, beta, [t])[0], ts[i], ts[i + 1], xtol=1e-14)
        for i in np.nonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0)[0]
    ]
    assert len(times) >= len(expected)
    found = [t for t in times if derivative_signs(args, alpha, beta, [t])[0] ** 2 < 1e-16]
    assert found == pytest.approx(expected, abs=1e-7)
    assert all(0.0 < t < horizon for t in times) and times == sorted(times)


def test_periodic_turning_points_are_lazy_and_in_the_horizon():
    assert list(cm._periodic(-0.5, 1.0, 3.0)) == [0.5, 1.5, 2.5]
    assert list(cm._periodic(0.0, 1.0, 2.0)) == [1.0]


@pytest.mark.parametrize("args", PIECES)
@pytest.mark.parametrize(
    "alpha, beta, level, inside",
    [(1.0, 0.0, 0.05, 1), (0.0, 1.0, -1.5, 1), (1.0, 0.5, 0.0, -1), (1.0, 0.0, 0.35, -1)],
)
def test_first_crossing_is_the_first_zero_of_the_sampled_exact_motion(
    args, alpha, beta, level, inside
):
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
    t_star = 0.3 + 1e-17 * 0  # first float > 0.3
    first = math.nextafter(0.3, 1.0)
    assert bit_bisection(lambda t: t > 0.3, 0.0, 1.0) == first
    assert locate(lambda t: 0.3 - t, 0.0, 1.0)[0] == first
    assert locate(lambda t: 1e-200 - t, 0.0, 1.0)[0] == pytest.approx(1e-200, rel=1e-15)
    assert cm._float(cm._bits(t_star)) == t_star


def test_reduced_mass_stiffness_and_planning():
    assert cm.reduced_mass(2.0, 3.0) == pytest.approx(6.0 / 5.0)
    assert cm.reduced_mass(0.0, 3.0) == 3.0
    assert cm.reduced_mass(2.0, 0.0) == 2.0
    assert cm.reduced_mass(0.0, 0.0) is None
    assert cm.stiffness_number(2.0, 0.1, 800.0, 30.0) == pytest.approx(0.1 * 20.0)
    assert cm.stiffness_number(2.0, 0.1, 800.0, 50.0) == pytest.approx(0.1 * 25.0)
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.5, 0.1) == pytest.approx(
        (0.5, (3.0 - 1.0) / 0.5 + 4.0 / 2.0)
    )
    assert cm.planning_step(3.0, 1.0, 4.0, 2.0, 0.0, 0.1) == (0.1, 0.0)


def test_deadbeat_acceleration_reaches_the_target_two_steps_ahead():
    x0, w0, x2, w2, h = 0.2, -1.0, 0.05, 0.4, 0.01
    a1 = cm.deadbeat_acceleration(x0, w0, x2, w2, h)
    x1, w1 = x0 + w0 * h + 0.5 * a1 * h * h, w0 + a1 * h
    a2 = (w2 - w1) / h  # the acceleration that gives w2 at 2h
    assert x1 + w1 * h + 0.5 * a2 * h * h == pytest.approx(x2, rel=1e-9)


def test_skip_series_sums_and_largest():
    assert cm._largest(lambda m: m <= 37) == 37
    assert cm._largest(lambda m: m <= 0) == 0
    assert cm._largest(lambda m: m <= 1) == 1
    assert cm._largest(lambda m: True) == 2**62
    assert cm._expm1(1.0) == pytest.approx(math.e - 1.0)
    assert cm._expm1(701.0) == math.inf
    # cycle j takes contact + q/(u*rho^j): durations summed directly
    u, rho, contact, q = 2.0, 0.9, 0.01, 0.05
    dur, factor, changes = cm._skip_exact(u, rho, contact, q, 0.5, 2)
    m = round(math.log(factor) / math.log(rho))
    direct = sum(contact + q / (u * rho**j) for j in range(m))
    assert dur == pytest.approx(direct, rel=1e-12)
    assert changes == 2 * m
    assert sum(contact + q / (u * rho**j) for j in range(m + 1)) <= 0.5
    assert sum(contact + q / (u * rho**j) for j in range(m + 2)) > 0.5
    dur, factor, changes = cm._skip_exact(u, 1.0, contact, q, 0.5, 2)
    assert factor == 1.0 and dur == pytest.approx(changes / 2 * (contact + q / u))
    assert cm._skip_exact(u, 1.1, contact, q, 0.5, 2) is None
    assert cm._skip_exact(u, 0.5, contact, q, 0.01, 2) is None


def test_close():
    assert cm._close(1.0, 1.0 + 1e-9) and not cm._close(1.0, 1.0 + 1e-7)


# ---- contact_motion: the envelope skip of follow() -------------------------------------------------


def test_skip_envelope_of_a_bouncing_rattle():
    """A cycle of duration proportional to its speed (a ball bouncing under g: tau = 2*u/g), the speed
    ratio rho per cycle: cycle j takes tau1*rho^(j+1), leaves at u*rho^(j+2)."""
    rho, u, tau0 = 0.999, 2.0, 0.4
    tau1 = tau0 * rho
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau1, 100.0, 2)
    m = changes // 2
    assert m == int(math.log1p(cm.ENVELOPE_STEP) / -math.log(rho))  # at most ENVELOPE_STEP of speed
    assert factor == pytest.approx(rho**m, rel=1e-12)
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # limited by the span: S(m + 1) <= span < S(m + 2)
    span = 1.5
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau1, span, 3)
    m = changes // 3
    assert (
        sum(tau1 * rho ** (j + 1) for j in range(m + 1))
        <= span
        < sum(tau1 * rho ** (j + 1) for j in range(m + 2))
    )
    assert dt == pytest.approx(sum(tau1 * rho ** (j + 1) for j in range(m)), rel=1e-10)
    # a duration growing with a decreasing speed (tau ~ 1/speed: q = 1/rho)
    dt, factor, changes = cm._skip_envelope(u, rho, rho, tau0, tau0 / rho, 100.0, 2)
    m = changes // 2
    assert dt == pytest.approx(sum(tau0 / rho * rho ** -(j + 1) for j in range(m)), rel=1e-10)


def test_skip_envelope_periodic_refused_and_within_the_drift_tolerance():
    tau = 0.3
    dt, factor, changes = cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 10.0, 2)
    assert (
        factor == 1.0 and changes == 2 * 32 and dt == pytest.approx(32 * tau)
    )  # 33*0.3 <= 10 < 34*0.3
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau * 1.001, 10.0, 2) is None  # not periodic
    assert cm._skip_envelope(1.0, 0.99, 1.0, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 0.99, tau, tau, 10.0, 2) is None  # ratio 1 then < 1
    assert cm._skip_envelope(1.0, 0.9, 0.99, tau, tau, 10.0, 2) is None  # drifting ratio
    assert cm._skip_envelope(1.0, 0.99, 1.01, tau, tau, 10.0, 2) is None  # gaining speed
    assert cm._skip_envelope(1.0, 0.0, 0.99, tau, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, 0.0, tau, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 0.99, 0.99, tau, 0.0, 10.0, 2) is None
    assert cm._skip_envelope(1.0, 1.0, 1.0, tau, tau, 0.5, 2) is None  # no whole cycle fits
    # just within the drift tolerance: 0.1*(1 - rho1)
    assert cm._skip_envelope(1.0, 0.9905, 0.99, tau, tau * 0.99, 10.0, 2) is not None


def test_reduced_mass_of_light_bodies():
    assert cm.reduced_mass(0.5, 0.25) == pytest.approx(1.0 / 6.0)
    assert cm.reduced_mass(0.5, 0.0) == 0.5 and cm.reduced_mass(0.0, 0.25) == 0.25


# ---- phi2 against its Taylor series in exact arithmetic -----------------------------------------


def phi2_exact(z, terms=150):
    """sum_n (-z)^n/(n + 2)! (phi2's docstring) in rational arithmetic, rounded once."""
    z = Fraction(z)
    total, term = Fraction(0), Fraction(1, 2)
    for n in range(terms):
        total += term
        term *= -z / (n + 3)
    return float(total)


@pytest.mark.parametrize(
    "z", [0.0, 1e-9, -0.3, 0.4999, 0.5, -0.5, 0.7, 1.0, -1.2, 1.49, -1.49, 3.0, 20.0]
)
def test_phi2_is_its_series(z):
    """phi2(z) = (z - 1 + exp(-z))/z^2 = sum (-z)^n/(n + 2)!: to a few ulps on both sides of the
    switch at |z| = 0.5 (the 16-term series would be 2e-13 off at |z| = 1.5)."""
    assert cm.phi2(z) == pytest.approx(phi2_exact(z), rel=4e-15, abs=0.0)  # measured: <= 4.4e-16


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
    dt, factor, more = cm._cycles(rec, history, 0.0, 10.0, 14)
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
    dt, factor, more = cm._cycles(
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
        cm._cycles(records_of(ts, wrong_ratio, cont, free, 10), list(history), 0.0, span, 14)
        is None
    )
    wrong_contact = [0.5, 0.5 + c, 0.5 + 2.2 * c]
    assert (
        cm._cycles(
            records_of(ts, [-v for v in u], wrong_contact, free, 10), list(history), 0.0, span, 14
        )
        is None
    )
    wrong_flight = [1.0, 1.0 + q / u[0], 1.0 + q / u[0] + 1.1 * q / u[1]]
    assert (
        cm._cycles(
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
        cm.EXACT_CHANGES - 4,
        x=0.003,
        per_cycle=2,
    )
    history = ["FLOOR", "AIR"] * 3
    q = rho**p_exp
    m = int(math.log(1.02) / -math.log(rho))  # the speed cap (the span is long)
    dt, factor, more = cm._cycles(rec, history, -9.81, 1000.0, cm.EXACT_CHANGES)
    assert more == 2 * m and factor == pytest.approx(rho**m, rel=1e-13)
    assert dt == pytest.approx(
        sum(tau1 * q ** (j + 1) for j in range(m)), rel=1e-9
    )  # measured: 1e-13
    # before EXACT_CHANGES: still exact
    assert cm._cycles(list(rec), history, -9.81, 1000.0, cm.EXACT_CHANGES - 1) is None


# ---- the work bound: first_crossing counts, bound_work raises above MAX_WORK --------------------


class CountingPiece:
    """A Piece whose motion evaluations (state) are counted."""

    def __init__(self, piece):
        self.piece, self.calls = piece, 0

    def state(self, t):
        self.calls += 1
        return self.piece.state(t)

    def turning_points(self, alpha, beta, horizon):
        return self.piece.turning_points(alpha, beta, horizon)


def test_first_crossing_adds_its_motion_evaluations_to_work():
    """work(): motion evaluations done by first_crossing so far (one per evaluation of the motion)."""
    piece = CountingPiece(cm.Piece(0.0, 1.0, 1.0, 0.0))
    before = cm.work()
    t = cm.first_crossing(piece, 1.0, 0.0, 0.5, -1, 2.0)  # x = t reaches 0.5 at t = 0.5
    assert t == pytest.approx(0.5, rel=1e-15)
    assert piece.calls >= 2 and cm.work() - before == piece.calls


def test_bound_work_raises_only_above_max_work():
    """bound_work docstring: EventStorm if MORE than MAX_WORK evaluations since start, naming what."""
    now = cm.work()
    cm.bound_work(now - cm.MAX_WORK, "exactly the bound")  # no error
    with pytest.raises(
        cm.EventStorm, match=f"^one more did not finish: more than {cm.MAX_WORK} motion"
    ):
        cm.bound_work(now - cm.MAX_WORK - 1, "one more")


def test_follow_names_its_prediction_when_it_meets_the_work_bound(monkeypatch):
    """follow: a prediction needing more than MAX_WORK evaluations is an EventStorm naming the
    prediction's horizon (here MAX_WORK lowered to 20: one bounce needs more)."""
    monkeypatch.setattr(cm, "MAX_WORK", 20)
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)
    with pytest.raises(cm.EventStorm, match=r"^contact prediction over 0\.5 s did not finish"):
        cm.follow(0.0, 1.0, 1.0, 0.0, [0.5], classify, law)


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
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, 0.0, times)
    assert abs(ref[-1][0]) < half  # the last time in the gap
    assert changes == 4 * ref_changes > cm.MAX_SEGMENTS
    assert onset == pytest.approx(ref_onset, rel=1e-12)
    for (x, w), (xr, wr) in zip(
        out, ref, strict=True
    ):  # measured: 6e-12 m (the phase after 60 s), 3e-16
        assert x == pytest.approx(xr, rel=0.0, abs=6e-11)
        assert w == pytest.approx(wr, rel=4e-15)


# ---- held_motion --------------------------------------------------------------------------------


def test_held_motion_is_the_uniformly_accelerated_motion():
    """x + h*w + a*h^2/2, w + a*h: written out with values whose products are exact in binary."""
    assert cm.held_motion(0.5, -2.0, 4.0, 0.25) == (0.5 - 0.5 + 0.125, -2.0 + 1.0)
    assert cm.held_motion(1.0, 0.0, -8.0, 0.5) == (0.0, -4.0)


# ---- Piece: overflow and cancellation ----------------------------------------------------------


def test_piece_overflow_of_a_huge_finite_state_is_not_taken_for_a_crossing():
    """Piece.state turns an overflow into nan (outside every region) only for a growing solution
    (negative damping: a falling friction band of the EndStop); a motion from -1.8e308 under a
    damped law keeps its values (ElastoGap, m_b = 1 g: the nightly hypothesis profile of
    tests/fmi/test_properties.py found 10000
    spurious changes, an internal error, after that conversion was made unconditional). Where the
    damped motion itself overflows (here at its first region change), follow gives non-finite
    states from there on at once (not 2 changes counted here with infinite states)."""
    from contactfmu.components.ElastoGap import law as elastogap
    from contactfmu.mechanics.contact_motion import Piece

    out, onset, changes = elastogap.predict(
        -1.7976931348623157e308, 0.0, 1e-3, 0.0, (1e-4, 2e-4), 1.0, 1.0
    )
    assert (onset, changes) == (0.0, 0) and not any(math.isfinite(x + w) for x, w in out)
    x, w = Piece(0.0, 1.0, 1e-3, 0.0, 1e6, -400.0).state(1.0)  # growing: e^(2e5 t) overflows
    assert math.isnan(x) and math.isnan(w)


def test_piece_damper_velocity_has_no_cancellation_of_its_limit():
    """contact_motion.Piece, kind "damper" (a falling friction band: negative slope): with the
    limit velocity winf = 16 m/s far above |w0| = 6.8e-5 m/s, w(t) = winf + (w0 - winf)*exp(-k t)
    lost w0's digits (3.5e-15 m/s at t = 1e-15 s, more than the distance to a band end); written
    as w0 + (w0 - winf)*expm1(-k t), w(t) = w0 + a0*t to rounding for small t."""
    from contactfmu.mechanics.contact_motion import Piece

    mu, g, d, w0 = 1e-3, -3.13e7, -1.9528, -6.780688961960e-05
    piece = Piece(0.0, w0, mu, g, 0.0, d)
    a0 = g - d * w0 / mu
    for t in (1e-18, 1e-15, 1e-12):
        assert abs(piece.state(t)[1] - (w0 + a0 * t)) <= 1e-19 + abs(a0 * t) * 1e-6
