"""A small explicit ODE integrator with event location, standard library only (it runs inside
the FMUs, where scipy is not available).

* Dormand-Prince 5(4) with local error control (the pair of scipy's RK45) and the usual
  step-size controller;
* events g(t, y) = 0 with a direction (+1 rising, -1 falling, 0 both), located on a cubic
  Hermite interpolant of the accepted step (which has the accuracy of the solution between
  steps) by bisection to a time tolerance, and the integration stops at the first event.

The tests compare it with scipy.integrate.solve_ivp (events, tight tolerances).
"""
import math

# Dormand-Prince 5(4) tableau
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)  # B5 - B4


class Event:
    """g(t, y) -> float; direction +1 (rising through 0), -1 (falling) or 0 (either)."""

    __slots__ = ("g", "direction", "name")

    def __init__(self, g, direction=0, name=""):
        self.g, self.direction, self.name = g, direction, name


def _hermite(t0, y0, f0, t1, y1, f1, t):
    h = t1 - t0
    x = (t - t0) / h
    h00 = (1 + 2 * x) * (1 - x) ** 2
    h10 = x * (1 - x) ** 2
    h01 = x * x * (3 - 2 * x)
    h11 = x * x * (x - 1)
    return [h00 * a + h10 * h * fa + h01 * b + h11 * h * fb for a, fa, b, fb in zip(y0, f0, y1, f1)]


def _crosses(g0, g1, direction):
    if direction >= 0 and g0 < 0.0 <= g1:
        return True
    if direction <= 0 and g0 > 0.0 >= g1:
        return True
    return False


def _stages(rhs, t, y, f, h):
    """One Dormand-Prince step: (stage derivatives, 5th-order solution, error estimate)."""
    n = len(y)
    k = [f]
    for i in range(1, 7):
        yi = [y[j] + h * sum(_A[i][m] * k[m][j] for m in range(i)) for j in range(n)]
        k.append(rhs(t + _C[i] * h, yi))
    y_new = [y[j] + h * sum(_B[m] * k[m][j] for m in range(6)) for j in range(n)]
    e = [h * sum(_E[m] * k[m][j] for m in range(7)) for j in range(n)]
    return k, y_new, e


def _stages2(rhs, t, y, f, h):
    """_stages for two state variables (a body's s and v), the sums written out: the same
    arithmetic in the same order, about twice as fast."""
    y0, y1 = y
    k = [f]
    for i in range(1, 7):
        s0 = s1 = 0.0
        for a, km in zip(_A[i], k):
            s0 += a * km[0]
            s1 += a * km[1]
        k.append(rhs(t + _C[i] * h, [y0 + h * s0, y1 + h * s1]))
    b0 = b1 = e0 = e1 = 0.0
    for b, e, km in zip(_B, _E, k):
        b0 += b * km[0]
        b1 += b * km[1]
        e0 += e * km[0]
        e1 += e * km[1]
    return k, [y0 + h * b0, y1 + h * b1], [h * e0, h * e1]


def integrate(rhs, t0, y0, t_end, events=(), rtol=1e-10, atol=1e-12, h=None, max_step=math.inf,
              t_tol=1e-13):
    """Integrate y' = rhs(t, y) from t0 to t_end, stopping at the first event.

    Returns (t, y, event, h_next): the end time (t_end or the event time), the state there, the
    Event that stopped the integration (or None) and a step size to continue with. An event
    whose function is exactly 0 at t0 does not trigger again at t0 (it must cross)."""
    y = list(y0)
    t = t0
    span = t_end - t0
    if span <= 0.0:
        return t0, y, None, h
    f = rhs(t, y)
    if h is None or not h > 0.0:
        scale = max(max(abs(v) for v in y), 1e-6)
        fmax = max(max(abs(v) for v in f), 1e-12)
        h = min(0.01 * scale / fmax, span)
    h = min(h, max_step, span)
    g_prev = [e.g(t, y) for e in events]
    n = len(y)
    while t < t_end:
        last = False
        if t + h >= t_end or t_end - (t + h) < 1e-12 * max(1.0, abs(t_end)):
            h = t_end - t
            last = True
        k, y_new, e_vec = (_stages2 if n == 2 else _stages)(rhs, t, y, f, h)
        err = 0.0
        for j in range(n):
            sc = atol + rtol * max(abs(y[j]), abs(y_new[j]))
            err = max(err, abs(e_vec[j]) / sc)
        if err > 1.0 and h > 1e-15 * max(1.0, abs(t)):
            h *= max(0.2, 0.9 * err ** -0.2)
            continue
        t_new = t + h
        f_new = k[6]  # FSAL: rhs at (t_new, y_new)
        g_new = [e.g(t_new, y_new) for e in events]
        hit = None
        for i, e in enumerate(events):
            if _crosses(g_prev[i], g_new[i], e.direction):
                # locate on the interpolant: earliest crossing among the events
                lo, hi = t, t_new
                while hi - lo > t_tol * max(1.0, abs(hi)):
                    mid = 0.5 * (lo + hi)
                    gm = e.g(mid, _hermite(t, y, f, t_new, y_new, f_new, mid))
                    if _crosses(g_prev[i], gm, e.direction):
                        hi = mid
                    else:
                        lo = mid
                if hit is None or hi < hit[0]:
                    hit = (hi, e)
        h_next = h * min(5.0, max(0.2, 0.9 * err ** -0.2)) if err > 0 else 5.0 * h
        h_next = min(h_next, max_step)
        if hit is not None:
            te, ev = hit
            return te, _hermite(t, y, f, t_new, y_new, f_new, te), ev, h_next
        t, y, f, g_prev = (t_end if last else t_new), y_new, f_new, g_new
        h = h_next
    return t_end, y, None, h
