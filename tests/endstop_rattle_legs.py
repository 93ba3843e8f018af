"""The rigid EndStop's rattle between its two stops written out leg by leg (constant
acceleration over the distance between the stops, the impact map at each stop): the references
of the EndStop rattle tests.
"""
import math

from contactfmu.components.EndStop import law as endstop


# ==== the rigid EndStop's rattle between its two stops =============================================

S1, S2 = endstop.STOP1, endstop.STOP2


SIGN = {S1: 1.0, S2: -1.0}          # sign of the impulse of an impact at that stop (Fi > 0 at stop 1)


OTHER = {S1: S2, S2: S1}


# ---- a rigid rattle between two stops, written out ------------------------------------------------

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


# ---- _rattle: leg by leg ---------------------------------------------------------------------------

def rattle_one_by_one(side, u, mu, g, ci, eps, distance, slide, span, max_legs=10 ** 7):
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
