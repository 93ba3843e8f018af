"""Rigid bodies: MSL Components.Mass and Components.Fixed.

Mass (PartialRigid): flange_a.s = s - L/2, flange_b.s = s + L/2, v = der(s), a = der(v),
m*a = F, where F is the sum of the forces acting on the body. In the FMU convention the
force inputs are the cut forces of the connected compliant elements, so F = -flange_a.f - flange_b.f.
"""


def flange_positions(s, L):
    """(flange_a.s, flange_b.s) of a rigid body of length L with centre s."""
    return s - 0.5 * L, s + 0.5 * L


def acceleration(m, force):
    """Newton: a = F/m."""
    return force / m


def advance(s, v, a, h):
    """Motion after h under the constant acceleration a (exact for a force held over the step)."""
    return s + h * (v + 0.5 * h * a), v + h * a
