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
    """One Dormand-Prince step: (stage derivatives, 5th-order solution, error estimate).

    The increments are summed as (h*a_ij)*k_j, not h*(a_ij*k_j summed): the sum of the stage
    derivatives alone can overflow (|f| near the largest float) where every increment over a short
    step is small, and the step-size control could then never find a step that makes progress."""
    n = len(y)
    k = [f]
    for i in range(1, 7):
        ha = [h * a for a in _A[i]]
        yi = [y[j] + sum(ha[m] * k[m][j] for m in range(i)) for j in range(n)]
        k.append(rhs(t + _C[i] * h, yi))
    hb = [h * b for b in _B]
    he = [h * e for e in _E]
    y_new = [y[j] + sum(hb[m] * k[m][j] for m in range(6)) for j in range(n)]
    e = [sum(he[m] * k[m][j] for m in range(7)) for j in range(n)]
    return k, y_new, e


def _stages2(rhs, t, y, f, h):
    """_stages for two state variables (a body's s and v), the sums written out: the same
    arithmetic in the same order, about twice as fast."""
    y0, y1 = y
    k = [f]
    for i in range(1, 7):
        s0 = s1 = 0.0
        for a, km in zip(_A[i], k):
            ha = h * a
            s0 += ha * km[0]
            s1 += ha * km[1]
        k.append(rhs(t + _C[i] * h, [y0 + s0, y1 + s1]))
    b0 = b1 = e0 = e1 = 0.0
    for b, e, km in zip(_B, _E, k):
        hb, he = h * b, h * e
        b0 += hb * km[0]
        b1 += hb * km[1]
        e0 += he * km[0]
        e1 += he * km[1]
    return k, [y0 + b0, y1 + b1], [e0, e1]


class StepBudgetExceeded(RuntimeError):
    """integrate() needed more steps than its budget allowed (a problem too stiff for an explicit
    method at the tolerances): raised so that a call returns in bounded time."""


_TINY = 5e-324  # the smallest float


def _finite(values):
    return math.isfinite(sum(values))


def integrate(
    rhs,
    t0,
    y0,
    t_end,
    events=(),
    rtol=1e-10,
    atol=1e-12,
    h=None,
    max_step=math.inf,
    t_tol=1e-13,
    budget=None,
):
    """Integrate y' = rhs(t, y) from t0 to t_end, stopping at the first event.

    Returns (t, y, event, h_next): the end time (t_end or the event time), the state there, the
    Event that stopped the integration (or None) and a step size to continue with. An event
    whose function is exactly 0 at t0 does not trigger again at t0 when it moves away from the
    crossing (direction 0: it must cross); a directional one that moves past 0 triggers there.

    Bounded time whatever the numbers: a step is never shorter than h_min = 1e-15*max(1, |t|)
    (so that t advances), a step whose error estimate is not finite is rejected like a too large
    one, and a solution that overflows (no finite step of h_min, or a non-finite derivative)
    ends the integration at once with that non-finite state (event None), for the caller to
    report. budget: None, or a one-element list [steps left] shared by several calls: each
    attempted step uses one; StepBudgetExceeded when none is left."""
    y = list(y0)
    t = t0
    span = t_end - t0
    if span <= 0.0:
        return t0, y, None, h
    f = rhs(t, y)
    if not _finite(f):
        return t, [v * math.nan if math.isfinite(v) else v for v in f], None, h
    h_min = 1e-15 * max(1.0, abs(t0), abs(t_end))
    if h is None or not h > 0.0:
        scale = max(max(abs(v) for v in y), 1e-6)
        fmax = max(max(abs(v) for v in f), 1e-12)
        h = 0.01 * scale / fmax
    h = min(max(h, h_min), max_step, span)
    # a directional event exactly at 0 at t0 counts as on the side it crosses from: it triggers as
    # soon as the function is past 0 (e.g. a breakaway whose velocity turns back at once), and
    # not if it moves away from the crossing (an event just handled does not trigger again)
    g_prev = [
        (-_TINY * e.direction if g == 0.0 else g) for e, g in ((e, e.g(t, y)) for e in events)
    ]
    n = len(y)
    while t < t_end:
        if budget is not None:
            if budget[0] <= 0:
                raise StepBudgetExceeded(
                    f"the integration did not reach t = {t_end!r} s: step budget used up at t = {t!r} s with the "
                    f"state {y!r} and its derivative {f!r} (too stiff for the explicit integrator at rtol = {rtol!r})"
                )
            budget[0] -= 1
        last = False
        if t + h >= t_end or t_end - (t + h) < 1e-12 * max(1.0, abs(t_end)):
            h = t_end - t
            last = True
        k, y_new, e_vec = (_stages2 if n == 2 else _stages)(rhs, t, y, f, h)
        err = 0.0
        for j in range(n):
            sc = atol + rtol * max(abs(y[j]), abs(y_new[j]))
            err = max(err, abs(e_vec[j]) / sc)
        if not (_finite(e_vec) and _finite(y_new)):
            err = math.inf  # (max() would drop a nan)
        if not err <= 1.0 and h > h_min:  # too large, or not finite (nan: not <= 1)
            h = max(h * (max(0.2, 0.9 * err**-0.2) if math.isfinite(err) else 0.2), h_min)
            continue
        if not (_finite(y_new) and _finite(k[6])):  # overflow even over the shortest step
            return t + h, y_new if not _finite(y_new) else [v * math.nan for v in y_new], None, h
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
                    if not lo < mid < hi:
                        break
                    gm = e.g(mid, _hermite(t, y, f, t_new, y_new, f_new, mid))
                    if _crosses(g_prev[i], gm, e.direction):
                        hi = mid
                    else:
                        lo = mid
                if hit is None or hi < hit[0]:
                    hit = (hi, e)
        h_next = h * min(5.0, max(0.2, 0.9 * err**-0.2)) if err > 0 else 5.0 * h
        h_next = min(max(h_next, h_min), max_step)
        if hit is not None:
            te, ev = hit
            return te, _hermite(t, y, f, t_new, y_new, f_new, te), ev, h_next
        t, y, f, g_prev = (t_end if last else t_new), y_new, f_new, g_new
        h = h_next
    return t_end, y, None, h
