"""EndStop: the element's relative motion under its law (law.py), in closed form.

From (dx, dv) in state (stop, sf) under the held relative acceleration g (everything but the
element) and the reduced mass mu, each state is a linear motion (motion.Piece)

    mu*dv' = mu*g - c*(dx - xe) - d*dv - F0

(free: c = d = 0; at an elastic stop c = k1, d = b1, xe = l1 (stop 2: k2, b2, -l2); a rigid
connection or stuck friction: dv = 0; sliding stick-slip friction F0 = Fsl*sf; continuous friction
F0 + d_f*dv within one of its velocity bands, friction.py), which ends where one of the state's
guards alpha*dx + beta*dv - level changes sign (motion.earliest_crossing): a stop reached
(dx = l1, dx = -l2), an elastic stop's force Fstop = k1*(dx - l1) + b1*dv reaching 0 (release),
the stop point passed or dv turning into the stop again (detaching), dv = 0 (sticking), a friction
band's end. The event then applies the documented transition (rigid impact dv' = -ci*dv, permanent
contact if |dv'| <= eps_dv; law.settle for the instantaneous ones). After a rigid impact the
bounces on one stop or the rattle between both are summed in closed form (bounces.py, friction.py).
"""

import math

from ...mechanics.coupler import stiffness_number
from ...mechanics.motion import EventStorm, Piece, bound_work, budget_start, earliest_crossing
from .bounces import geometric_bounces, rattle_series
from .friction import band_at, friction_bands, friction_bounces
from .law import (
    CONTINUOUS,
    DETACH1,
    DETACH2,
    FREE,
    RIGID,
    STICK_SLIP,
    STOP1,
    STOP2,
    Prediction,
    absent,
    holding_force,
    settle,
    stop_force,
    transmits,
)

# state changes followed one by one before the prediction gives up (EventStorm): about 50 us of
# CPU each (a contact ringing through the friction's velocity bands), so a storm that none of the
# closed-form summations covers ends within about 0.25 s (10000 took up to 1.7 s on a loaded
# machine, beyond the bound of a doStep's time)
MAX_SEGMENTS = 5000


# One segment loop for the contact laws would be segments.follow; predict() keeps its own
# because follow cannot express this law without changing its results:
# - follow's next region is classify(x, w) of the state just past a crossing (memoryless); here the
#   state depends on the history and on which guard fired (detaching 11/21 vs free at the same (dx,
#   dv); stuck or sliding friction at dv = 0; a rigid stop's permanent contact);
# - events change the motion: a rigid impact sets dv to -ci*dv and dx to the stop exactly, sticking
#   sets dv = 0, where follow continues from piece.state(tc);
# - a segment's Piece is not Piece(x, w, mu, g, c, d, xe) with follow's g: the friction band's
#   offset and stick-slip's Fsl shift the held acceleration (g - F0/mu), a rigid connection or
#   stuck friction is Piece(x, 0, mu, 0);
# - the sampled states carry (stop, sf); the onset is also set by an impact at its instant (no
#   transmitting segment) and impulses and impacts are counted; a stop force that overflows ends
#   the prediction with non-finite states;
# - after a rigid impact the bounces are summed by their closed-form series (bounces.py,
#   friction.py), not by follow's cycle detection on exits from contact regions (_cycles), which
#   a zero-duration rigid contact never produces.
def predict(dx, dv, stop, sf, mu, g, times, p):
    """The element's relative motion from (dx, dv) in state (stop, sf) under the held relative
    acceleration g, for the reduced mass mu, at the ascending times. Closed form per state
    (motion.Piece), transitions located (motion.earliest_crossing). Continuous
    friction (kindF = 1) enters as its continuous piecewise linear interpolant (friction_bands):
    within each velocity band a linear damper, solved exactly however stiff (a 1 g mass on the
    friction's slope of 2e4 N.s/m near dv = 0 has a time constant of 5e-8 s), the crossing of a
    band's end located like any other transition; a motion that settles at the friction's
    equilibrium velocity approaches it within its band without further events."""
    pred = Prediction()
    if not math.isfinite(dx + dv + g):
        # the relative motion or the other forces overflowed (inputs near the largest float): no
        # motion to predict; non-finite results, which the FMU reports as such (fmi2Error)
        pred.states = [(math.nan, math.nan, stop, sf) for _ in times]
        pred.onset = 0.0
        return pred
    t, k = 0.0, 0
    x, w = dx, dv
    # continuous friction below the rounding of the held acceleration (|Ff| <= max(Fst, Fsl) <=
    # 1e-17*mu*|g|: g - Ff/mu is g) changes no motion: its bands are not followed (a body pressed at
    # 1e300 m/s2 onto an elastic stop oscillated through the friction's 212 bands at each turn, a
    # million motion evaluations in 2 s of CPU before its EventStorm)
    continuous = p.friction and p.kindF == CONTINUOUS and not _negligible_friction(mu, g, p)
    bands = friction_bands(p) if continuous else None
    stop, sf = settle(stop, sf, x, w, mu, g, p)
    start = budget_start()
    for _ in range(MAX_SEGMENTS):
        bound_work(start, f"EndStop prediction over {times[-1]} s")
        if pred.onset is None and transmits(stop, p):
            pred.onset = t
        fric0, damp, band_guards = 0.0, 0.0, ()
        if continuous and not (p.mode == RIGID and stop != FREE):
            fric0, damp, band_guards = band_at(bands, stop, x, w, mu, g, p)
        if not math.isfinite(stop_force(stop, x, w, p)):
            # the stop's force overflows (a position near the largest float against a stiff stop):
            # no motion to predict, every crossing would be one; non-finite results from here on,
            # as for non-finite inputs above (not an EventStorm after 1e6 motion evaluations)
            pred.states += [(math.nan, math.nan, stop, sf)] * (len(times) - k)
            if pred.onset is None:
                pred.onset = t
            return pred
        piece, guards = _piece(stop, sf, x, w, mu, g - fric0 / mu, damp, p)
        guards = [*guards, *band_guards]
        best = earliest_crossing(piece, guards, times[-1] - t)
        if best is not None:
            best = (best[0], guards[best[1]][4])
        while k < len(times) and (best is None or times[k] - t < best[0]):
            xs, ws = piece.state(times[k] - t)
            pred.states.append((xs, ws, stop, sf))
            k += 1
        if best is None:
            return pred
        tc, event = best
        x, w = piece.state(tc)
        t += tc
        pred.changes += 1
        pred.events += event != "band"
        stop, sf, x, w = _event(event, stop, sf, x, w, mu, p, pred, t)
        if event in ("hit1", "hit2") and stop == FREE and k < len(times):
            side = STOP1 if event == "hit1" else STOP2
            series = _bounce_series(event, w, mu, g, p, times[k] - t, pred)
            summed = (
                (series[0], side, *series[1:])
                if series is not None
                else rattle_series(side, w, mu, g, p, times[k] - t)
            )
            if summed is not None:  # bounces on one stop or a rattle between both, summed
                dt, side, w, impulse, impacts, permanent = summed  # (up to the next output time)
                t += dt
                x = p.l1 if side == STOP1 else -p.l2
                pred.impulse += impulse
                pred.impacts += impacts
                pred.changes += impacts
                pred.events += impacts
                if permanent:
                    stop, w = side, 0.0
        settled = settle(stop, sf, x, w, mu, g, p)
        pred.events += settled != (stop, sf)  # a breakaway
        stop, sf = settled
    raise EventStorm(
        f"EndStop prediction did not finish: more than {MAX_SEGMENTS} state changes within "
        f"{times[-1]} s (eps_dv = {p.eps_dv} too small for a bouncing contact?)"
    )


def _bounce_series(event, u, mu, g, p, span, pred=None):
    """Bounces of a rigid stop under constant accelerations, summed in closed form.

    Just after an impact at stop 1 (event hit1) the motion leaves with the rebound velocity u
    (< 0; stop 2 mirrored). If the flight decelerates it at a constant a_away > 0 and, from the
    apex on, accelerates it back at a constant a_back > 0 without reaching the other stop (no
    friction; or stick-slip friction sliding out and back, |mu*g| > Fst so it does not stick at the
    apex), each bounce repeats the previous one scaled: rebound speeds |u|*r^k with r =
    ci*sqrt(a_back/a_away), cycle times |u|*r^k*tau, tau = 1/a_away + 1/sqrt(a_away*a_back). The
    geometric series ends at finite time: the n-th impact's rebound |u|*r^n <= eps_dv makes the
    contact permanent (eps_dv = 0: the accumulation point |u|*tau/(1 - r)). Elastic impacts
    (r = 1) repeat the same bounce: whole periods are skipped. With continuous friction (kindF = 1)
    the flight's acceleration depends on the speed: those bounces are friction_bounces.

    Returns None if the bounces are not such a series, or not one cycle ends within span (the
    time to the next output: the caller simulates the bounce in progress); else (dt, w, impulse,
    impacts, permanent) after the complete cycles within span: their duration, the rebound
    velocity then (0 when the contact became permanent), the sum of their impulses and count."""
    # continuous friction below rounding of the pressing force (max(Fst, Fsl) <= 1e-17*mu*|g|,
    # e.g. a body pressed by 1e297 N): the bounces are those without friction
    negligible = p.friction and p.kindF != STICK_SLIP and _negligible_friction(mu, g, p)
    if p.mode != RIGID or p.preloaded or u == 0.0:
        return None
    side = 1.0 if event == "hit1" else -1.0  # direction into the stop
    if side * u >= 0.0:
        return None
    if p.friction and p.kindF != STICK_SLIP and not negligible:
        return friction_bounces(side, u, mu, g, p, span, pred)
    a_away = a_back = side * g
    if p.friction and not negligible:
        if abs(mu * g) <= holding_force(p) or p.Fsl < 0.0:
            return None  # sticks at the apex: an ordinary event ends the bouncing
        a_away += p.Fsl / mu
        a_back -= p.Fsl / mu
    return geometric_bounces(
        side, abs(u), a_away, a_back, p.restitution, p.eps_dv, mu, p.l1 + p.l2, span
    )


def _negligible_friction(mu, g, p):
    """Is a friction force of at most max(Fst, Fsl) below the rounding of the held force mu*g?"""
    return max(abs(p.Fst), abs(p.Fsl)) <= 1e-17 * mu * abs(g)


def _piece(stop, sf, x, w, mu, g, damp, p):
    """Piece of motion and guards (alpha, beta, level, inside, event) of the state; g includes the
    held part of a continuous friction force, damp its linearized damping."""
    l1, l2 = p.l1, p.l2
    if p.friction and p.kindF == STICK_SLIP:
        if sf == 0:
            return Piece(x, 0.0, mu, 0.0), []  # stuck: dv = 0 while g is held
        g = g - p.Fsl * sf / mu
    if p.mode == RIGID and stop != FREE:
        return Piece(x, 0.0, mu, 0.0), []  # rigid connection: dv = 0
    guards = []
    if p.friction and p.kindF == STICK_SLIP:
        guards.append((0.0, 1.0, 0.0, sf, "stick"))  # sliding ends when dv reaches 0
    if p.mode == RIGID:
        return Piece(x, w, mu, g, 0.0, damp), guards + [
            (1.0, 0.0, l1, -1, "hit1"),
            (1.0, 0.0, -l2, 1, "hit2"),
        ]
    if p.preloaded:  # engaged sides by position (l1 < -l2)
        one, two = x >= l1, x <= -l2
        c = (p.k1 if one else 0.0) + (p.k2 if two else 0.0)
        d = (p.b1 if one else 0.0) + (p.b2 if two else 0.0) + damp
        xe = ((p.k1 * l1 if one else 0.0) - (p.k2 * l2 if two else 0.0)) / c if c > 0.0 else 0.0
        guards += [
            (1.0, 0.0, l1, 1 if one else -1, "region"),
            (1.0, 0.0, -l2, -1 if two else 1, "region"),
        ]
        return Piece(x, w, mu, g, c, d, xe), guards
    if stop == STOP1:  # leaves when Fstop = k1*(x - l1) + b1*w < 0
        return Piece(x, w, mu, g, p.k1, p.b1 + damp, l1), guards + [
            (p.k1, p.b1, p.k1 * l1, 1, "release")
        ]
    if stop == STOP2:  # leaves when Fstop = k2*(x + l2) + b2*w > 0
        return Piece(x, w, mu, g, p.k2, p.b2 + damp, -l2), guards + [
            (p.k2, p.b2, -p.k2 * l2, -1, "release")
        ]
    piece = Piece(x, w, mu, g, 0.0, damp)
    if stop == FREE:  # (a side without stiffness and damping is absent: never entered)
        if not absent(STOP1, p):
            guards.append((1.0, 0.0, l1, -1, "enter1"))
        if not absent(STOP2, p):
            guards.append((1.0, 0.0, -l2, 1, "enter2"))
    elif stop == DETACH1:
        guards += [(1.0, 0.0, l1, 1, "passed"), (0.0, 1.0, 0.0, -1, "again")]
    elif stop == DETACH2:
        guards += [(1.0, 0.0, -l2, -1, "passed"), (0.0, 1.0, 0.0, 1, "again")]
    return piece, guards


def _event(event, stop, sf, x, w, mu, p, pred, t):
    """Apply a located event; returns (stop, sf, x, w)."""
    if event in ("hit1", "hit2"):
        side = STOP1 if event == "hit1" else STOP2
        after = -p.restitution * w
        if abs(after) <= p.eps_dv:
            after, stop = 0.0, side
        pred.impulse += mu * (w - after)
        pred.impacts += 1
        if pred.onset is None:
            pred.onset = t
        return stop, sf, (p.l1 if side == STOP1 else -p.l2), after
    if event == "stick":
        return stop, 0, x, 0.0
    if event == "enter1":
        return STOP1, sf, x, w
    if event == "enter2":
        return STOP2, sf, x, w
    if event == "release":
        if stop == STOP1:
            return (DETACH1 if x > p.l1 else FREE), sf, x, w
        return (DETACH2 if x < -p.l2 else FREE), sf, x, w
    if event == "passed":
        return FREE, sf, x, w
    if event == "again":
        return (STOP1 if stop == DETACH1 else STOP2), sf, x, w
    return stop, sf, x, w  # "region" of a preloaded element: settle recomputes the engaged sides


def motion(x, w, g, state, times, mu, p):
    """predict() in the form coupler.Coupler asks for: ([(dx, dv, (stop, sf)) at the times],
    onset, changes, the Prediction)."""
    pred = predict(x, w, state[0], state[1], mu, g, times, p)
    return [(xs, ws, (st, sf)) for xs, ws, st, sf in pred.states], pred.onset, pred.changes, pred


def stiff(mu, h, p):
    """Is the stop too stiff for the step h (coupler.couple plans deadbeat then)? A rigid stop
    always; an elastic one whose faster side the step does not resolve (stiffness_number > 1)."""
    return p.mode == RIGID or stiffness_number(mu, h, max(p.k1, p.k2), max(p.b1, p.b2)) > 1.0
