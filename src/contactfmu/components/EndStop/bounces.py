"""EndStop: bounces on a rigid stop (Rigid End Stop, mode 1) summed in closed form, without
simulating them one by one: the geometric bounce series on one stop and the rattle between both.

Geometric series (geometric_bounces): after an impact the motion leaves the stop with the rebound
speed s = ci*|dv| under a constant deceleration a_away, and comes back under a constant a_back;
each bounce is the last one scaled by

    r = ci*sqrt(a_back/a_away),   cycle time s*tau, tau = 1/a_away + 1/sqrt(a_away*a_back),

so m cycles take s*tau*(1 - r^m)/(1 - r), the rebound after them is s*r^m, and the contact becomes
permanent at the n-th impact with s*r^n <= eps_dv (documented: |dv'| <= eps_dv); r = 1 (elastic,
ci = 1) repeats one bounce. Rattle (rattle_series): between the stops D = l1 + l2 apart, a leg leaving at
speed s arrives at s' = sqrt(s^2 + 2*a*D) after 2*D/(s + s') and rebounds at ci*s'; per cycle
the squared speed is the affine map E' = ci^4*E + 2*D*ci^2*(ci^2*a_out + a_back), followed leg by
leg and, for a long rattle, by its envelope (_rattle_envelope).
"""

import math

from .law import RIGID, STICK_SLIP, STOP1, STOP2

# legs of a rigid rattle between the two stops followed one by one before its envelope
RATTLE_EXACT = 20000
RATTLE_STEP = 0.02  # largest relative change of the rattle's energy per envelope skip


def geometric_bounces(side, speed, a_away, a_back, ci, eps_dv, mu, distance, span):
    """The geometric bounce series of _bounce_series from the rebound speed `speed` > 0 (see there)."""
    if not (0.0 < a_away < math.inf and 0.0 < a_back < math.inf):
        return None
    if speed * (speed / a_away) >= 2.0 * distance:
        return None  # the apex reaches the other stop
    ratio = math.sqrt(a_back / a_away)
    r = ci * ratio
    tau = 1.0 / a_away + 1.0 / (math.sqrt(a_away) * math.sqrt(a_back))
    u = -side * speed
    if r == 1.0:
        # elastic impacts (ci = 1) without friction: every bounce repeats the last one; the whole
        # periods within span are skipped
        m = math.floor(span / (speed * tau))
        if not m >= 1:
            return None
        return m * speed * tau, u, side * mu * (1.0 + ci) * speed * m, m, False
    if not r < 1.0:
        return None
    # n: impacts until the rebound is within eps_dv (permanent contact); inf for eps_dv = 0
    if r == 0.0:
        n = 1.0
    elif eps_dv > 0.0:
        n = max(1.0, math.ceil(math.log(eps_dv / speed) / math.log(r))) if speed > eps_dv else 1.0
    else:
        n = math.inf
    # m: complete cycles within span; cycles(m) = speed*tau*(1 - r^m)/(1 - r)
    limit = speed * tau / (1.0 - r)
    if span >= limit:
        m = math.inf
    else:
        q = 1.0 - span / limit  # r^m >= q
        m = math.floor(math.log(q) / math.log(r)) if r > 0.0 else 1.0
        while m > 0 and speed * tau * (1.0 - r**m) / (1.0 - r) > span:
            m -= 1  # rounding of the logarithms
    m = min(m, n)
    if m < 1:
        return None
    permanent = m >= n
    rm = 0.0 if m == math.inf else r**m
    dt = speed * tau * (1.0 - rm) / (1.0 - r)
    impacts = m if m != math.inf else 1e9  # eps_dv = 0: infinitely many; counted as a large number
    impulse = side * mu * (1.0 + ci) * ratio * speed * (1.0 - rm) / (1.0 - r)
    if permanent and n != math.inf:
        impulse -= side * mu * ci * ratio * speed * r ** (n - 1)  # the last impact is plastic
    w = 0.0 if permanent else -side * speed * rm
    return dt, w, impulse, int(impacts), permanent


def rattle_series(side, u, mu, g, p, span):
    """A rigid rattle between the two stops (no stop preload), leg by leg in closed form.

    Just after an impact at stop `side` the motion leaves with velocity u toward the other stop,
    D = l1 + l2 away. Over a leg the acceleration along the travel is constant: a12 = -g - Fsl/mu
    from stop 1 to stop 2, a21 = g - Fsl/mu back (Fsl: sliding friction, 0 without friction;
    continuous friction only on legs fast enough for its excess over Fsl to be below rounding), so a
    leg leaving at speed s arrives at s' = sqrt(s^2 + 2*a*D) after 2*D/(s + s') and rebounds at
    ci*s' (permanent contact once ci*s' <= eps_dv). The squared speed leaving stop `side` is then
    an affine map per cycle (two legs): E' = ci^4*E + 2*D*ci^2*(ci^2*a_out + a_back).

    The first RATTLE_EXACT legs are followed one by one (exact to rounding). A longer rattle (an
    undamped one, ci = 1, at 863 m/s between stops 2 cm apart: 21,000 impacts a second; near the
    largest float, 1e300 a second) is followed by its envelope (_rattle_envelope); the phase of
    such a storm is an approximation, bounded in time. Legs end at the last impact before span
    (the time to the next output: the caller simulates the leg in progress).

    None if this is not such a rattle or no leg ends within span; else (dt, side, w, impulse,
    impacts, permanent): the time the legs took, the stop the motion is at and its velocity there,
    the sum of the impulses (sign of Fi) and their count, and whether the contact became permanent."""
    distance = p.l1 + p.l2
    if (
        p.mode != RIGID
        or not distance > 0.0
        or not (math.isfinite(u) and math.isfinite(g))
        or not mu > 0.0
    ):
        return None
    slide = p.Fsl / mu if p.friction else 0.0
    if not (slide >= 0.0 and math.isfinite(slide)):
        return None
    # continuous friction (kindF 1) is the sliding level Fsl to rounding where (Fst - Fsl)*exp(1 - |dv|/dvL)
    # is below 1e-17 of the forces: a leg is followed only while its speed stays above that
    v_sat = 0.0
    if p.friction and p.kindF != STICK_SLIP:
        excess = abs(p.Fst - p.Fsl)
        scale = 1e-17 * max(p.Fsl, mu * abs(g), 1e-300)
        v_sat = p.dvL * (1.0 + math.log(excess / scale)) if excess > scale else p.dvL
    if (u >= 0.0) if side == STOP1 else (u <= 0.0):
        return None  # not leaving toward the other stop
    accel = {STOP1: -g - slide, STOP2: g - slide}  # along the travel of the leg leaving that stop
    if not (math.isfinite(accel[STOP1]) and math.isfinite(accel[STOP2])):
        return None
    ci, eps = p.restitution, p.eps_dv
    other = {STOP1: STOP2, STOP2: STOP1}
    sign = {STOP1: 1.0, STOP2: -1.0}  # sign of the impulse of an impact at that stop

    def leg(at, s):
        """(duration, arrival speed) of the leg leaving `at` at speed s > 0; None if it does not arrive."""
        r = 2.0 * accel[at] * distance / s / s  # (scaled: s^2 overflows beyond 1.3e154 m/s)
        if not 1.0 + r > 0.0:
            return None
        s1 = s * math.sqrt(1.0 + r) if r < 1e16 else math.sqrt(s * s + 2.0 * accel[at] * distance)
        if not math.isfinite(s1) or min(s, s1) < v_sat:
            return None
        dt = (distance / s) * (2.0 / (1.0 + s1 / s))  # = 2*D/(s + s1) without overflowing s + s1
        return (
            (dt, s1) if dt > 0.0 else None
        )  # (a leg shorter than the smallest float: not followed)

    t, impulse, impacts, at, s, legs = 0.0, 0.0, 0, side, abs(u), 0
    while legs < 3 * RATTLE_EXACT:
        if legs >= RATTLE_EXACT and at == side:
            skip = _rattle_envelope(at, s, leg, accel, distance, ci, eps, mu, g, slide, span - t)
            if skip is not None:
                dt, s, dimpulse, cycles = skip
                t += dt
                impulse += dimpulse
                impacts += 2 * cycles
        step = leg(at, s)
        if step is None or t + step[0] > span:
            break
        dt, s1 = step
        legs += 1
        t += dt
        at = other[at]
        impacts += 1
        after = ci * s1
        if after <= eps:
            impulse += sign[at] * mu * s1
            return t, at, 0.0, impulse, impacts, True
        impulse += sign[at] * mu * (s1 + after)
        s = after
    if impacts == 0:
        return None
    return t, at, (-s if at == STOP1 else s), impulse, impacts, False


def _rattle_envelope(at, s, leg, accel, distance, ci, eps, mu, g, slide, span):
    """Whole cycles (leg out of `at` and back) of a long rattle, skipped along its speed map:
    (duration, speed leaving `at` after them, their impulse, their count) or None.

    - Fast (|a|*D below 1e-17*s^2 on both legs: the accelerations change a leg's time and speed
      by less than rounding): each cycle is the last one scaled, speed times ci^2, duration
      D*(1 + 1/ci)/s; any number of cycles is a geometric series, summed in closed form.
    - Otherwise: the affine map of E = s^2 (exact), in chunks of as many cycles as change E by at
      most RATTLE_STEP; a chunk's duration by Simpson's rule over its first, middle and last
      cycle (exact for a periodic rattle, E' = E).
    Chunks end at least one cycle before span and before a rebound within eps_dv. The impulse is
    the momentum balance of the relative motion over the cycles: J = mu*(g*dt - (w_end - w_start))
    minus the sliding friction's impulse (Fsl against the motion on each leg)."""
    back = STOP2 if at == STOP1 else STOP1
    direction = -1.0 if at == STOP1 else 1.0  # of the leg out of `at`
    q = ci**4
    one_minus_q = (1.0 - ci) * (1.0 + ci) * (1.0 + ci * ci)

    def cycle(speed):
        """(duration, duration of the leg out) of the cycle leaving at speed; None if it does not complete."""
        first = leg(at, speed)
        second = leg(back, ci * first[1]) if first is not None else None
        if second is None:
            return None
        return first[0] + second[0], first[0]

    c0 = cycle(s)
    if c0 is None or not c0[0] > 0.0 or ci == 0.0:
        return None
    amax = max(abs(accel[at]), abs(accel[back]))
    fast = amax * distance <= 1e-17 * s * s if s < 1e150 else amax * distance / s / s <= 1e-17
    if fast:
        r = ci * ci  # speed ratio per cycle
        limits = [span / c0[0] - 1.0]
        if r < 1.0:
            # sum_{j<m+1} T0/r^j <= span: r^-(m+1) <= 1 + span*(1/r - 1)/T0
            limits = [math.log1p(span * (1.0 / r - 1.0) / c0[0]) / -math.log(r) - 1.0]
            floor = max(eps, math.sqrt(amax * distance * 1e17))  # stay fast and above eps_dv
            if floor > 0.0:
                limits.append(math.log(floor / s) / math.log(r) - 1.0 if s > floor else 0.0)
        m = math.floor(min(limits))
        if not m >= 1:
            return None
        if r < 1.0:
            dt = c0[0] * math.expm1(-m * math.log(r)) / (1.0 / r - 1.0)
            sm = s * r**m
        else:
            dt, sm = m * c0[0], s
        t_out = dt * c0[1] / c0[0]  # every cycle scaled: the same share out
    else:
        e_rel = 2.0 * distance * ci * ci * (ci * ci * accel[at] + accel[back]) / s / s  # p/E0

        def ratio(m):  # E_m/E0
            if one_minus_q == 0.0:
                return 1.0 + m * e_rel
            if q == 0.0:
                return e_rel
            return math.exp(m * math.log(q)) - e_rel * math.expm1(m * math.log(q)) / one_minus_q

        # |E_m - E0| = (1 - q^m)*|E0 - E*| (E* = p/(1 - q), the map's fixed point) <= RATTLE_STEP*E0
        gap = abs(1.0 - e_rel / one_minus_q) if one_minus_q > 0.0 else None
        if gap is None:
            m_energy = RATTLE_STEP / abs(e_rel) if e_rel != 0.0 else math.inf
        elif gap == 0.0 or q == 0.0:
            m_energy = math.inf if gap == 0.0 else 0.0
        else:
            m_energy = (
                math.log1p(-min(RATTLE_STEP / gap, 1.0)) / math.log(q)
                if RATTLE_STEP < gap
                else math.inf
            )
        m = math.floor(min(m_energy, span / c0[0] - 1.0))
        while m >= 1:
            cm = cycle(s * math.sqrt(ratio(m)))
            if (
                cm is not None
                and (m + 1) * max(c0[0], cm[0]) <= span
                and ci * s * math.sqrt(ratio(m)) > eps
            ):
                break
            m = math.floor(m / 2)
        if not m >= 1:
            return None
        ch = cycle(s * math.sqrt(ratio(0.5 * m)))
        if ch is None:
            return None
        dt = m * (c0[0] + 4.0 * ch[0] + cm[0]) / 6.0
        t_out = m * (c0[1] + 4.0 * ch[1] + cm[1]) / 6.0
        sm = s * math.sqrt(ratio(m))
    friction = mu * slide * direction * (t_out - (dt - t_out))
    impulse = mu * (g * dt - direction * (sm - s)) - friction
    return dt, sm, impulse, m
