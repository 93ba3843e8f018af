"""The segment loop of a piecewise linear contact law: :func:`follow` runs the law's motion from
region to region (each a :class:`~.motion.Piece`, left at its first crossing), and sums a rattle's
repeated cycles in closed form (exactly without other forces, by its envelope under them).

Standard library only: this module runs inside the FMUs.
"""

import math
from typing import NamedTuple

from .motion import EventStorm, Piece, bound_work, budget_start, earliest_crossing


class Exit(NamedTuple):
    """A linear condition that holds inside a region, inside*(alpha*x + beta*w - level) >= 0: the
    motion leaves the region where it stops holding (motion.first_crossing)."""

    alpha: float
    beta: float
    level: float
    inside: int


class Region(NamedTuple):
    """A region of a piecewise linear law: its force F = c*(x - xe) + d*w, the conditions that
    hold inside it (exits: Exit records) and whether it transmits a force (a contact)."""

    c: float
    d: float
    xe: float
    exits: tuple
    transmits: bool


MAX_SEGMENTS = 10000  # segments simulated one by one (cycle skipping keeps a rattle far below this)
EXACT_CHANGES = 2000  # contact changes simulated exactly before a rattle under g != 0 is followed by its envelope
ENVELOPE_STEP = 0.02  # largest relative change of the rattle's speed per envelope skip (g != 0)
# a cycle's speed ratio this close to 1 is 1 (an undamped law, measured to rounding)
_UNDAMPED = 1e-12
_SAME = 1e-8  # two cycles agree: their ratio, contact time and flight measure to this relative tolerance


def follow(x, w, mu, g, times, classify, law, exact=False):
    """Motion of a piecewise linear contact law under the held acceleration g, at the ascending
    times: ([(x, w) at each time], onset, changes), onset being the first time the law transmits a
    force (0 if at the start, None if not up to the last time), changes the number of region changes.

    classify(x, w) -> region; law(region) -> Region: the region's linear law (F = c*(x - xe) + d*w)
    and the linear conditions (Exit records) whose violation (first_crossing) ends it; the next
    region is classify() of the state just past the crossing.

    A rattle (the motion leaving a contact the same way again and again through the same
    sequence of regions) is not simulated bounce by bounce up to the next requested time:
    - g = 0 (no other force): each contact phase is the last one scaled (a linear law about its
      boundary: the same contact time, the exit speed times a fixed ratio) and each free flight
      across the gap takes (distance)/|w|. Once two consecutive cycles show that (ratio, contact
      time and speed*flight time equal to rounding), whole cycles are summed as a geometric series
      (_skip_exact) up to the last complete one before the next requested time: the state after
      them is the measured exit state with the speed scaled, exact to rounding.
    - g != 0: a cycle is no longer the last one scaled; after EXACT_CHANGES changes simulated
      exactly, the rattle is followed by its envelope (_skip_envelope): the cycle map measured over
      two cycles (speed ratio, duration as a power of the speed), extrapolated over as many cycles
      as change the speed by at most ENVELOPE_STEP, then measured again. An approximation (of
      the phase of a storm of thousands of contacts), bounded in time.
    exact=True: event by event throughout (the reference the tests compare the skipping with)."""
    if not math.isfinite(x + w + g):  # overflowed inputs: non-finite results, reported by the FMU
        return [(math.nan, math.nan)] * len(times), 0.0, 0
    out, onset, changes, t, k = [], None, 0, 0.0, 0
    region = classify(x, w)
    history = []  # regions of the segments, in order
    records = []  # exits from contacts: (key, t, x, w, changes, len(history), contact, free)
    contact_time = free_time = 0.0  # summed durations of transmitting / non-transmitting segments
    start = budget_start()
    for _ in range(MAX_SEGMENTS):
        bound_work(start, f"contact prediction over {times[-1]} s")
        c, d, xe, exits, transmits = law(region)
        if transmits and onset is None:
            onset = t
        piece = Piece(x, w, mu, g, c, d, xe)
        crossing = earliest_crossing(piece, exits, times[-1] - t)
        tc = None if crossing is None else crossing[0]
        while k < len(times) and (tc is None or times[k] - t < tc):
            out.append(piece.state(times[k] - t))
            k += 1
        if tc is None:
            return out, onset, changes
        x, w = piece.state(tc)
        if not math.isfinite(x + w):
            # the motion overflowed (a penetration near the largest float): no motion to follow,
            # non-finite results from here on, as for non-finite inputs above (going on would walk
            # through nan segments of 5e-324 s until an EventStorm after MAX_WORK evaluations)
            out += [(math.nan, math.nan)] * (len(times) - k)
            return out, (t if onset is None else onset), changes
        t += tc
        history.append(region)
        if transmits:
            contact_time += tc
        else:
            free_time += tc
        previous, region = region, classify(x, w)
        changes += 1
        if exact or not transmits or law(region)[4]:
            continue
        # left a contact: a point of the cycle map
        records.append(
            ((previous, region, w > 0.0), t, x, w, changes, len(history), contact_time, free_time)
        )
        skip = _cycles(records, history, g, times[k] - t, changes)
        if skip is not None:
            dt, factor, more = skip
            t += dt
            w *= factor
            changes += more
            records = [records[-1][:1] + (t, x, w, changes) + records[-1][5:]]
    raise EventStorm(
        f"contact prediction did not finish: more than {MAX_SEGMENTS} contact changes "
        f"within {times[-1]} s"
    )


def _cycles(records, history, g, span, changes):
    """Cycle skipping at the exit from a contact just recorded (records[-1]): None, or (dt, factor,
    changes) of the whole cycles skipped (their duration, the factor on the exit velocity, their
    contact changes), ending at least one cycle before span (the time to the next requested time)."""
    del records[:-16]
    key = records[-1][0]
    same = [r for r in records if r[0] == key][-3:]
    if len(same) < 3:
        return None
    r0, r1, r2 = same
    if history[r0[5] : r1[5]] != history[r1[5] : r2[5]]:
        return None  # not the same sequence of regions
    u0, u1, u2 = abs(r0[3]), abs(r1[3]), abs(r2[3])
    if not (u0 > 0.0 and u1 > 0.0 and u2 > 0.0):
        return None
    cycle_changes = r2[4] - r1[4]
    # per cycle: duration, time in contact, free time (of cycle 0 and cycle 1)
    tau0, tau1 = r1[1] - r0[1], r2[1] - r1[1]
    c0, c1 = r1[6] - r0[6], r2[6] - r1[6]
    f0, f1 = r1[7] - r0[7], r2[7] - r1[7]
    rho0, rho1 = u1 / u0, u2 / u1
    # undamped (d = 0): the speed returns to rounding; exactly periodic
    rho0, rho1 = (
        (1.0 if abs(rho0 - 1.0) <= _UNDAMPED else rho0),
        (1.0 if abs(rho1 - 1.0) <= _UNDAMPED else rho1),
    )
    if g == 0.0:
        if not (_close(rho0, rho1) and _close(c0, c1) and _close(f0 * u0, f1 * u1)):
            return None
        return _skip_exact(u2, rho1, c1, f1 * u1, span, cycle_changes)
    if changes < EXACT_CHANGES:
        return None
    return _skip_envelope(u1, rho0, rho1, tau0, tau1, span, cycle_changes)


def _close(a, b):
    return abs(a - b) <= _SAME * max(abs(a), abs(b))


def _skip_exact(u, rho, contact, q, span, cycle_changes):
    """g = 0: from an exit at speed u, cycle j (j = 0, 1, ...) takes contact + q/(u*rho^j) and
    leaves at u*rho^(j+1). The largest number m of cycles with the duration S(m + 1) <= span."""
    if not 0.0 < rho <= 1.0:
        return None  # (a passive law never gains speed)

    def duration(m):
        if rho == 1.0:
            return m * (contact + q / u)
        return m * contact + q / u * _expm1(-m * math.log(rho)) / _expm1(
            -math.log(rho)
        )  # 1/rho - 1 without cancellation

    m = _largest(lambda m: duration(m + 1) <= span)
    if m < 1:
        return None
    return duration(m), rho**m, m * cycle_changes


def _skip_envelope(u, rho0, rho1, tau0, tau1, span, cycle_changes):
    """g != 0: the envelope of the rattle. From the exit at speed u*rho1 (cycles 0 and 1 measured
    from u/rho0 and u), cycle j leaves at u*rho1^(j+2) and takes tau1*q^(j+1), q = rho1^p with the
    duration's power p of the speed fitted to the two cycles; at most as many cycles as change the
    speed by ENVELOPE_STEP, and S(m + 1) <= span. Undamped (rho = 1, the same duration twice): the
    motion is periodic, and the whole periods up to span are skipped."""
    if not (0.0 < rho1 <= 1.0 and 0.0 < rho0 and tau0 > 0.0 and tau1 > 0.0):
        return None
    if rho1 == 1.0:
        if rho0 != 1.0 or not _close(tau0, tau1):
            return None
        q = 1.0  # undamped: a periodic motion
    else:
        if abs(rho1 - rho0) > 0.1 * abs(1.0 - rho1) or rho0 == 1.0:
            return None  # the ratio drifts: not a smooth envelope yet
        q = rho1 ** (math.log(tau1 / tau0) / math.log(rho0))

    def duration(m):
        if q == 1.0:
            return m * tau1 * q
        return tau1 * q * _expm1(m * math.log(q)) / (q - 1.0)

    m = _largest(lambda m: duration(m + 1) <= span)
    if rho1 != 1.0:
        m = min(m, max(1, int(math.log1p(ENVELOPE_STEP) / abs(math.log(rho1)))))
    if m < 1:
        return None
    return duration(m), rho1**m, m * cycle_changes


def _expm1(z):
    return math.expm1(z) if z < 700.0 else math.inf


def _largest(ok):
    """The largest integer m >= 0 with ok(m) (ok monotone: true up to some m), or 0; capped at 2**62."""
    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi < 2**62 and ok(hi):
        lo, hi = hi, hi * 2
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
