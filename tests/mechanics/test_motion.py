"""The closed-form motion of a contact region and the location of its crossings,
src/contactfmu/mechanics/motion.py: the pieces (Piece), their turning points, first_crossing and
the bisection on float bits, phi1/phi2, and the work bound (bound_work, MAX_WORK).

Every expected value is independent of the module: the exact solution of
mu*x'' = mu*g - c*(x - xe) - d*x' by the matrix exponential (scipy.linalg.expm) or its characteristic
roots written out here, brentq on those, the Taylor series of phi2 in exact rational arithmetic,
IEEE-754 facts, or a statement of the docstring of the function tested (its contract). Fast: no FMU.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from motion_reference import reference_state
from scipy.linalg import expm
from scipy.optimize import brentq

from contactfmu.mechanics import motion


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
    x, w = motion.Piece(*args).state(t)
    xr, wr = reference_state(*args, t)
    assert x == pytest.approx(xr, rel=1e-10, abs=1e-13)
    assert w == pytest.approx(wr, rel=1e-10, abs=1e-13)


def test_piece_over_at_the_time_where_the_root_difference_times_t_is_one():
    """Overdamped piece with r1 - r2 = -1 (sigma^2 - omega0^2 = 1/4): exact at t = -1 (dr*t = 1)."""
    args = (0.3, -1.0, 1.0, 0.7, 2.0, 3.0, 0.1)  # sigma = 1.5, root = 0.5, dr = -1
    x, w = motion.Piece(*args).state(-1.0)
    xr, wr = reference_state(*args, -1.0)
    assert (x, w) == pytest.approx((xr, wr), rel=1e-10)


def test_piece_defaults_are_free_flight():
    """Piece(x0, w0, mu, g): c = d = xe = 0, free flight x0 + w0 t + g t^2/2."""
    x, w = motion.Piece(0.3, -1.0, 2.0, 0.7).state(1.5)
    assert (x, w) == pytest.approx((0.3 - 1.5 + 0.35 * 1.5**2, -1.0 + 0.7 * 1.5), rel=1e-14)
    x, w = motion.Piece(0.3, -1.0, 2.0, 0.7, 8.0, 1.0).state(0.9)  # xe = 0 by default
    assert (x, w) == pytest.approx(
        reference_state(0.3, -1.0, 2.0, 0.7, 8.0, 1.0, 0.0, 0.9), rel=1e-10
    )


@pytest.mark.parametrize("args", ALL)
def test_piece_acceleration_is_the_law(args):
    """Piece.acceleration(x, w) = g - (c*(x - xe) + d*w)/mu (the class docstring)."""
    x, w = 0.17, -0.4
    assert motion.Piece(*args).acceleration(x, w) == pytest.approx(
        accel(args, x, w), rel=1e-14, abs=1e-15
    )


def test_growing_piece_overflows_to_nan_and_a_stable_one_to_its_value():
    """Piece.state docstring: a growing solution (d < 0) that overflows is (nan, nan); a huge finite
    free flight stays its value (inf where the value exceeds the float range)."""
    piece = motion.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)  # w = e^t, x = e^t - 1
    assert piece.state(1.0) == pytest.approx((math.e - 1.0, math.e), rel=1e-14)
    assert all(math.isnan(v) for v in piece.state(720.0))  # e^720 overflows
    assert all(math.isnan(v) for v in piece.state(1e5))  # expm1 raises OverflowError
    x, w = motion.Piece(0.0, 1e300, 1.0, 0.0).state(1e10)  # free flight, d = 0: not growing
    assert x == math.inf and w == 1e300
    x, w = motion.Piece(0.0, 1e300, 1.0, 0.0, 0.0, 0.5).state(1e10)  # decaying damper: not growing
    assert x == pytest.approx(1e300 / 0.5, rel=1e-12) and w == pytest.approx(0.0, abs=1e-200)


def test_growing_piece_with_an_infinite_term_is_nan():
    """Piece.state docstring: a growing piece (d < 0) whose x or w overflows to inf without an
    exception is (nan, nan): w = w0 e^(-k t), x = w0 (e^(-k t) - 1)/(-k) (k = d/mu < 0)."""
    x, w = motion.Piece(0.0, 1e306, 1.0, 0.0, 0.0, -1e-3).state(
        1000.0
    )  # x = 1.7e309: inf, w finite
    assert math.isnan(x) and math.isnan(w)
    x, w = motion.Piece(0.0, 1e307, 1.0, 0.0, 0.0, -10.0).state(0.29)  # w = 1.8e308: inf, x finite
    assert math.isnan(x) and math.isnan(w)
    x, w = motion.Piece(0.0, 1e306, 1.0, 0.0, 0.0, -1e-3).state(1.0)  # both finite: the values
    assert x == pytest.approx(1e306 * math.expm1(1e-3) / 1e-3, rel=1e-12)
    assert w == pytest.approx(1e306 * math.exp(1e-3), rel=1e-12)


# ---- turning points ------------------------------------------------------------------------------


def derivative(args, alpha, beta, t):
    """d/dt (alpha*x + beta*w) of the exact motion."""
    x, w = reference_state(*args, t)
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
    times = list(motion.Piece(*args).turning_points(alpha, beta, horizon))
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
    piece = motion.Piece(0.0, -1.0, 1.0, 0.5)
    assert list(piece.turning_points(1.0, 0.0, 3.0)) == [2.0]
    assert list(piece.turning_points(1.0, 0.0, 2.0)) == []
    assert list(piece.turning_points(1.0, 0.0, 1.0)) == []
    assert (
        list(motion.Piece(0.0, 1.0, 1.0, 0.0).turning_points(1.0, 0.0, 5.0)) == []
    )  # g = 0: no turn
    # w = cos(t) of x = sin(t) (c = mu = 1): w' = -sin(t) = 0 at pi, 2 pi
    times = list(motion.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0).turning_points(0.0, 1.0, 7.0))
    assert times == pytest.approx([math.pi, 2.0 * math.pi], rel=1e-14)
    # x' = cos(t) = 0 at pi/2 + k pi
    times = list(motion.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0).turning_points(1.0, 0.0, 5.0))
    assert times == pytest.approx([0.5 * math.pi, 1.5 * math.pi], rel=1e-14)


def test_turning_points_of_a_damper_and_of_an_overdamped_piece_without_a_turn():
    """A damper's velocity (alpha = 0) and position moving toward its limit speed never turn; an
    overdamped piece at rest in its equilibrium has a constant value (no turning point)."""
    assert list(motion.Piece(0.0, 1.0, 1.0, 2.0, 0.0, 1.0).turning_points(0.0, 1.0, 10.0)) == []
    assert list(motion.Piece(0.0, 1.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0)) == []
    assert (
        list(motion.Piece(0.0, 2.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0)) == []
    )  # w0 = winf
    assert (
        list(motion.Piece(0.1, 0.0, 1.0, 0.0, 4.0, 12.0, 0.1).turning_points(1.0, 0.0, 10.0)) == []
    )
    assert (
        list(motion.Piece(0.1, 0.0, 1.0, 0.0, 1.0, 2.0, 0.1).turning_points(1.0, 0.3, 10.0)) == []
    )


def test_turning_point_of_a_damper_under_a_force_reversing_the_motion():
    """Damper w' = g - k w from w0 = -1, g = 2, k = 1: x turns where w = 0, t = ln(1 + k/g*1)*... =
    ln((g - k w0)/g)/k = ln(1.5) (the analytic zero of w = winf + (w0 - winf) e^(-k t))."""
    times = list(motion.Piece(0.0, -1.0, 1.0, 2.0, 0.0, 1.0).turning_points(1.0, 0.0, 10.0))
    assert times == pytest.approx([math.log(1.5)], rel=1e-14)
    # a falling band (k = -1): w = -2 + (w0 + 2) e^t from w0 = -1.5: w = 0 at ln(4)
    times = list(motion.Piece(0.0, -1.5, 1.0, 2.0, 0.0, -1.0).turning_points(1.0, 0.0, 10.0))
    assert times == pytest.approx([math.log(4.0)], rel=1e-14)


def test_periodic_is_lazy_and_in_the_horizon():
    """_periodic docstring: first, first + period, ... in (0, horizon), lazily."""
    assert list(motion._periodic(-0.5, 1.0, 3.0)) == [0.5, 1.5, 2.5]
    assert list(motion._periodic(0.0, 1.0, 2.0)) == [1.0]
    assert list(motion._periodic(0.25, 1.0, 2.25)) == [0.25, 1.25]
    assert list(motion._periodic(0.25, 0.5, 1.0)) == [0.25, 0.75]
    assert list(motion._periodic(3.0, 1.0, 2.0)) == []
    gen = motion._periodic(0.5, 1e-12, 1e12)  # 1e24 values: only the first are made
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
        x, w = reference_state(*args, t)
        return inside * (alpha * x + beta * w - level)

    piece = motion.Piece(*args)
    tc = motion.first_crossing(piece, alpha, beta, level, inside, horizon)
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
    piece = motion.Piece(0.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    tc = motion.first_crossing(piece, 1.0, 0.0, 0.9, -1, 2.0)
    assert tc == pytest.approx(math.asin(0.9), abs=1e-14)
    # free flight x = t leaves x <= 1 just after t = 1; the horizon is exactly 1: the float after 1
    # is beyond the horizon: None; horizon 1.5: the earliest float with x > 1
    free = motion.Piece(0.0, 1.0, 1.0, 0.0)
    assert motion.first_crossing(free, 1.0, 0.0, 1.0, -1, 1.0) is None
    assert motion.first_crossing(free, 1.0, 0.0, 1.0, -1, 1.5) == math.nextafter(1.0, 2.0)
    # x = t leaves x < 1 (inside = -1 on level 1 - ulp...) on the horizon 1 exactly: at 1
    assert motion.first_crossing(free, 1.0, 0.0, math.nextafter(1.0, 0.0), -1, 1.0) == 1.0
    # a level in w only (alpha = 0) with a position that is inf: the value is w alone
    assert motion.first_crossing(free, 0.0, 1.0, 1.0, -1, 5.0) is None


def test_first_crossing_with_a_nan_position_beyond_the_float_range():
    """nan (an overflowed growing motion) counts as outside (Piece.state docstring): x = e^t - 1
    never leaves x >= -1, but overflows after t = ln(max float) = 709.78."""
    piece = motion.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)
    tc = motion.first_crossing(piece, 1.0, 0.0, -1.0, 1, 1000.0)
    assert tc == pytest.approx(math.log(1.7976931348623157e308), rel=1e-6)
    # w alone (alpha = 0) of a motion whose x is inf: a free flight at 1e300 m/s for 1e10 s
    free = motion.Piece(0.0, 1e300, 1.0, 0.0)
    assert motion.first_crossing(free, 0.0, 1.0, 0.0, 1, 1e10) is None
    # x alone (beta = 0) of a motion whose w overflows at t = 1: w = 1e308*(1 + t), x = 1e308*(t + t^2/2)
    free = motion.Piece(0.0, 1e308, 1.0, 1e308)
    assert motion.first_crossing(free, 1.0, 0.0, -1.0, 1, 1.0) is None


def bit_bisection(outside, lo, hi):
    """Reference: the earliest float in (lo, hi] at which outside() holds (outside(lo) false,
    outside(hi) true), by halving the binary representation of the times to adjacent floats."""
    ilo, ihi = motion._bits(lo), motion._bits(hi)
    while ihi - ilo > 1:
        imid = (ilo + ihi) // 2
        if outside(motion._float(imid)):
            ihi = imid
        else:
            ilo = imid
    return motion._float(ihi)


def locate(f, lo, hi):
    """motion._locate with its evaluations: (float, [times probed])."""
    calls = []

    def counted(t):
        calls.append(t)
        return f(t)

    return motion._locate(counted, lo, hi, f(hi)), calls


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
    piece = motion.Piece(0.0, 1.0, 1.0, 0.0, 1e4, 5.0, 0.0)  # a ringing contact, x in [-0.01, 0.01]
    guards = [
        (1.0, 0.0, 0.008, -1),  # leaves x <= 0.008
        (0.0, 1.0, -0.5, 1),  # leaves w >= -0.5
        (1.0, 0.0, -0.002, 1),  # leaves x >= -0.002
        (0.0, 1.0, 0.999, -1),  # leaves w <= 0.999 (never: w starts at 1)
        (1.0, 0.0, 0.008, -1),  # the first guard again: a tie
    ]
    for order in ([0, 1, 2, 3, 4], [2, 1, 0], [1, 2], [4, 3, 2, 1, 0], [3]):
        chosen = [guards[i] for i in order]
        each = [motion.first_crossing(piece, *g, 0.05) for g in chosen]
        want = min(((t, i) for i, t in enumerate(each) if t is not None), default=None)
        assert motion.earliest_crossing(piece, chosen, 0.05) == want
    assert motion.earliest_crossing(piece, [guards[3]], 0.05) is None


def test_bits_and_float_are_the_ieee_754_representation():
    """_bits/_float: the IEEE-754 binary64 bit pattern as a signed 64-bit integer and back."""
    assert motion._bits(1.0) == 0x3FF0000000000000
    assert motion._bits(0.0) == 0
    assert motion._bits(5e-324) == 1
    assert motion._bits(-2.0) == -(1 << 63) + 0x4000000000000000
    assert motion._float(0x3FF0000000000000) == 1.0
    assert motion._float(1) == 5e-324
    assert motion._float(0x4000000000000001) == math.nextafter(2.0, 3.0)
    assert motion._float(-(1 << 63) + 0x4000000000000000) == -2.0


# ---- corners -----------------------------------------------------------------------------------


def test_overdamped_piece_at_the_first_float_after_zero():
    """Piece.state: x = x0 + w0 t to first order; at t = 5e-324 where (r1 - r2)*t underflows to 0,
    x = w0*t = 1e300*5e-324 (the exact solution; overdamped, sigma^2 - omega0^2 = 0.0125)."""
    t = 5e-324
    x, w = motion.Piece(0.0, 1e300, 1.0, 0.0, 0.01, 0.3).state(t)
    assert x == pytest.approx(1e300 * t, rel=1e-12, abs=0.0)
    assert w == pytest.approx(1e300, rel=1e-12)


def test_no_turning_point_at_the_start_or_on_a_pure_mode():
    """turning_points docstring: times strictly inside (0, horizon): a free flight starting at rest
    under g turns at t = 0 only (none returned); x = e^(-2t) (c = 2, d = 3, mu = 1: roots -1, -2,
    started on the fast mode x0 = 1, w0 = -2) is monotone: none."""
    assert list(motion.Piece(0.0, 0.0, 1.0, 2.0).turning_points(1.0, 0.0, 5.0)) == []
    assert list(motion.Piece(1.0, -2.0, 1.0, 0.0, 2.0, 3.0).turning_points(1.0, 0.0, 10.0)) == []
    assert (
        list(motion.Piece(1.0, -1.0, 1.0, 0.0, 2.0, 3.0).turning_points(1.0, 0.0, 10.0)) == []
    )  # slow mode


@pytest.mark.parametrize("args", [OVER, OVER_SMALL, UNDER, CRITICAL, DAMPER])
@pytest.mark.parametrize("alpha, beta", [(2.0, 0.3), (1.0, -0.8), (0.0, 1.0)])
def test_turning_points_do_not_depend_on_the_scale_of_the_motion(args, alpha, beta):
    """Linearity: with g = 0 and xe = 0 the motion from s*(x0, w0) is s times the motion from
    (x0, w0): the same turning points for s = 1e-200 (products of such values underflow)."""
    x0, w0, mu, g, c, d, xe = args
    base = list(motion.Piece(x0, w0, mu, 0.0, c, d, 0.0).turning_points(alpha, beta, 5.0))
    small = list(
        motion.Piece(x0 * 1e-200, w0 * 1e-200, mu, 0.0, c, d, 0.0).turning_points(alpha, beta, 5.0)
    )
    assert small == pytest.approx(base, rel=1e-12)


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
    piece = motion.Piece(*args)
    x, w = piece.state(t)
    xr, wr = reference_state(*args, t)
    assert x == pytest.approx(xr, rel=1e-9, abs=1e-12)
    assert w == pytest.approx(wr, rel=1e-9, abs=1e-12)
    assert piece.acceleration(x, w) == pytest.approx(
        args[3] - (args[4] * (x - args[6]) + args[5] * w) / args[2]
    )


def test_piece_kinds():
    assert motion.Piece(0, 0, 2.0, 0, 4.0, 12.0).kind == "over"
    assert motion.Piece(0, 0, 2.0, 0, 8.0, 1.0).kind == "under"
    assert motion.Piece(0, 0, 2.0, 0, 2.0, 4.0).kind == "critical"
    assert motion.Piece(0, 0, 2.0, 0, 0.0, 1.0).kind == "damper"
    assert motion.Piece(0, 0, 2.0, 0).kind == "free"


def test_growing_piece_overflows_to_nan():
    piece = motion.Piece(0.0, 1.0, 1.0, 0.0, 0.0, -1.0)
    assert piece.state(1.0) == pytest.approx((math.e - 1.0, math.e))
    x, w = piece.state(1e4)
    assert math.isnan(x) and math.isnan(w)
    # a stable piece is never nan: it decays
    x, w = motion.Piece(0.0, 1.0, 1.0, 0.0, 0.0, 1.0).state(1e4)
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
    times = list(motion.Piece(*args).turning_points(alpha, beta, horizon))
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
    assert list(motion._periodic(-0.5, 1.0, 3.0)) == [0.5, 1.5, 2.5]
    assert list(motion._periodic(0.0, 1.0, 2.0)) == [1.0]


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
    tc = motion.first_crossing(motion.Piece(*args), alpha, beta, level, inside, horizon)
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
    assert motion._float(motion._bits(t_star)) == t_star


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
    assert motion.phi2(z) == pytest.approx(
        phi2_exact(z), rel=4e-15, abs=0.0
    )  # measured: <= 4.4e-16


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
    piece = CountingPiece(motion.Piece(0.0, 1.0, 1.0, 0.0))
    before = motion.work()
    t = motion.first_crossing(piece, 1.0, 0.0, 0.5, -1, 2.0)  # x = t reaches 0.5 at t = 0.5
    assert t == pytest.approx(0.5, rel=1e-15)
    assert piece.calls >= 2 and motion.work() - before == piece.calls


def test_bound_work_raises_only_above_max_work():
    """bound_work docstring: EventStorm if MORE than MAX_WORK evaluations since start, naming what."""
    now = motion.work()
    motion.bound_work(now - motion.MAX_WORK, "exactly the bound")  # no error
    with pytest.raises(
        motion.EventStorm, match=f"^one more did not finish: more than {motion.MAX_WORK} motion"
    ):
        motion.bound_work(now - motion.MAX_WORK - 1, "one more")


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
    from contactfmu.mechanics.motion import Piece

    out, onset, changes = elastogap.predict(
        -1.7976931348623157e308, 0.0, 1e-3, 0.0, (1e-4, 2e-4), 1.0, 1.0
    )
    assert (onset, changes) == (0.0, 0) and not any(math.isfinite(x + w) for x, w in out)
    x, w = Piece(0.0, 1.0, 1e-3, 0.0, 1e6, -400.0).state(1.0)  # growing: e^(2e5 t) overflows
    assert math.isnan(x) and math.isnan(w)


def test_piece_damper_velocity_has_no_cancellation_of_its_limit():
    """motion.Piece, kind "damper" (a falling friction band: negative slope): with the
    limit velocity winf = 16 m/s far above |w0| = 6.8e-5 m/s, w(t) = winf + (w0 - winf)*exp(-k t)
    lost w0's digits (3.5e-15 m/s at t = 1e-15 s, more than the distance to a band end); written
    as w0 + (w0 - winf)*expm1(-k t), w(t) = w0 + a0*t to rounding for small t."""
    from contactfmu.mechanics.motion import Piece

    mu, g, d, w0 = 1e-3, -3.13e7, -1.9528, -6.780688961960e-05
    piece = Piece(0.0, w0, mu, g, 0.0, d)
    a0 = g - d * w0 / mu
    for t in (1e-18, 1e-15, 1e-12):
        assert abs(piece.state(t)[1] - (w0 + a0 * t)) <= 1e-19 + abs(a0 * t) * 1e-6
