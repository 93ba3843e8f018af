"""Linear compliant elements of MSL Translational.Components: Spring, Damper, SpringDamper.

PartialCompliant: s_rel = flange_b.s - flange_a.s, flange_b.f = f, flange_a.f = -f.
f > 0 (tension) pulls the two flanges together; f < 0 pushes them apart.
"""


def relative_motion(s_a, v_a, s_b, v_b):
    """(s_rel, v_rel) = (flange_b.s - flange_a.s, flange_b.v - flange_a.v)."""
    return s_b - s_a, v_b - v_a


def spring_force(s_rel, c, s_rel0):
    """Spring: f = c*(s_rel - s_rel0)."""
    return c * (s_rel - s_rel0)


def damper_force(v_rel, d):
    """Damper: f = d*v_rel; its lossPower is f*v_rel."""
    return d * v_rel


def force_rate(v_rel, a_rel, c, d):
    """Time derivative of the linear force law: df/dt = c*v_rel + d*a_rel."""
    return c * v_rel + d * a_rel


def spring_damper_force(s_rel, v_rel, c, d, s_rel0):
    """SpringDamper: f = c*(s_rel - s_rel0) + d*v_rel; lossPower = d*v_rel^2."""
    return c * (s_rel - s_rel0) + d * v_rel
