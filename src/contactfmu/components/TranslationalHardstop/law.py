"""TranslationalHardstop: MapleSim Translational Hardstop, a double-sided stiff stop
(MapleSim documentation, "Translational Hardstop: double-sided translational mechanism that
restricts motion to a set length").

flange_a sits at the centre of a gap of width b, flange_b on the frame moving in it:

    s_rel = s_b - s_a,  v_rel = der(s_rel)
    F = F_b = -F_a = c*(s_rel - b/2) + d*v_rel    for s_rel >  b/2    (upper stop)
                     c*(s_rel + b/2) + d*v_rel    for s_rel < -b/2    (lower stop; the page
                                                   prints "s_rel < b/2", an obvious typo)
                     0                            otherwise            (in the gap)
    for b <= 2e-10:  F = c*s_rel + d*v_rel        (plain spring-damper)

The damper force is not bounded (unlike MSL ElastoGap): F jumps to d*v_rel when a stop is hit
and pulls (F has the sign of v_rel) while the flanges separate inside a stop. With the
documented defaults c = d = 1e10 against 1 kg the contact is overdamped with time constants
m/d = 1e-10 s and d/c = 1 s: an impact is plastic, and a body pulled away from a stop stays
"glued" to it while the spring relaxes.

:func:`predict` solves the relative motion under this law in closed form (mechanics.segments.follow) for
given reduced mass and other accelerations; the FMU's coupler.Coupler turns that
prediction into the force it holds over a communication step when it knows the attached inertia.
"""

from ...mechanics.motion import Piece
from ...mechanics.segments import Exit, Region, follow

GAP_MIN = 2e-10  # b <= GAP_MIN: plain spring-damper (documentation)
FREE, UPPER, LOWER = 0, 1, -1


def force(s_rel, v_rel, b, c, d):
    """(F, contact) of the documented law; contact is +1 at the upper stop (s_rel > b/2), -1 at
    the lower stop (s_rel < -b/2), 0 in the gap; for b <= 2e-10 the sign of s_rel."""
    if b > GAP_MIN:
        half = 0.5 * b
        if s_rel > half:
            return c * (s_rel - half) + d * v_rel, UPPER
        if s_rel < -half:
            return c * (s_rel + half) + d * v_rel, LOWER
        return 0.0, FREE
    return c * s_rel + d * v_rel, (s_rel > 0.0) - (s_rel < 0.0)


def force_rate(s_rel, v_rel, a_rel, b, c, d):
    """dF/dt of the documented law (c*v_rel + d*a_rel in contact, 0 in the gap)."""
    if b > GAP_MIN and -0.5 * b <= s_rel <= 0.5 * b:
        return 0.0
    return c * v_rel + d * a_rel


def interface(s_rel, b, c, d):
    """(dF/ds_rel, dF/dv_rel): (c, d) in contact (and everywhere for b <= 2e-10), (0, 0) in the gap."""
    if b > GAP_MIN and -0.5 * b <= s_rel <= 0.5 * b:
        return 0.0, 0.0
    return c, d


def _region(x, w, g, half):
    """Region of the law for the motion (x, w) with acceleration g; on a boundary, the side the
    motion is going to (F is 0 there in both)."""
    if x > half or (x == half and (w > 0.0 or (w == 0.0 and g > 0.0))):
        return UPPER
    if x < -half or (x == -half and (w < 0.0 or (w == 0.0 and g < 0.0))):
        return LOWER
    return FREE


def predict(x, w, mu, g, times, b, c, d, exact=False):
    """Motion of the relative coordinate under the law, for the reduced mass mu and the other
    relative acceleration g (held), at the ascending times: returns ([(x, w) at each time], onset,
    changes); onset is the first time a stop is in contact (0 if in contact at the start, None if
    never up to the last time) and changes the number of contact changes (hits and releases)."""
    if not b > GAP_MIN:
        piece = Piece(x, w, mu, g, c, d, 0.0)
        return [piece.state(t) for t in times], 0.0, 0
    half = 0.5 * b
    laws = {
        # free until x > half or x < -half
        FREE: Region(0.0, 0.0, 0.0, (Exit(1.0, 0.0, half, -1), Exit(1.0, 0.0, -half, 1)), False),
        UPPER: Region(c, d, half, (Exit(1.0, 0.0, half, 1),), True),
        LOWER: Region(c, d, -half, (Exit(1.0, 0.0, -half, -1),), True),
    }
    return follow(x, w, mu, g, times, lambda x, w: _region(x, w, g, half), laws.__getitem__, exact)
