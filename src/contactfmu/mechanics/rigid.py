"""Rigid bodies: MSL Components.Mass and Components.Fixed.

Mass (PartialRigid): flange_a.s = s - L/2, flange_b.s = s + L/2, v = der(s), a = der(v),
m*a = F, where F is the sum of the forces acting on the body. In the FMU convention the
force inputs are the cut forces of the connected compliant elements, so F = -flange_a.f - flange_b.f.
"""


def acceleration(m, force):
    """Newton: a = F/m."""
    return force / m


def advance(s, v, a, h, jerk=0.0):
    """Motion after h under the acceleration a + jerk*t: exact for a force that is held
    (jerk = 0) or varies linearly over the step (jerk = dF/dt / m)."""
    return (s + h * (v + h * (0.5 * a + h * jerk / 6.0)), v + h * (a + 0.5 * h * jerk))
