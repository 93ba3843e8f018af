"""ElastoGap: MSL Translational.Components.ElastoGap (v4.1.0), "1D translational spring damper
combination with gap" (MSL 4.1 documentation and code of the component).

    contact = s_rel < s_rel0
    f_c  = -f_ref*|(s_rel - s_rel0)/s_ref|^n         (= -c*|s_rel - s_rel0|^n with s_ref = 1, f_ref = c)
    f_d2 = d*v_rel                                  (unbounded linear damper force)
    f_d  = min(max(f_d2, f_c), -f_c)                (bounded: |f_d| <= |f_c|)
    f    = f_c + f_d      (0 without contact)       lossPower = f_d*v_rel >= 0

f is flange_b.f: f <= 0, the element only pushes the flanges apart; it is continuous at the
start of contact (f_c = 0 there) and never pulls, since |f_d| <= |f_c|.

For n = 1 the law is piecewise linear in x = s_rel - s_rel0 and w = v_rel (k = f_ref/s_ref):

    FREE      x >= 0                        f = 0
    LINEAR    x < 0, k*x <= d*w <= -k*x     f = k*x + d*w
    APPROACH  x < 0, d*w < k*x              f = 2*k*x      (f_d bounded to f_c)
    SEPARATE  x < 0, d*w > -k*x             f = 0          (f_d bounded to -f_c)

so :func:`predict` solves the motion of two bodies joined by it in closed form (mechanics.segments.follow).
"""

from ...mechanics.segments import Exit, Region, follow

FREE, LINEAR, APPROACH, SEPARATE = 0, 1, 2, 3


def reference_force(c, s_ref, f_ref=0.0):
    """The spring force at the reference compression s_ref: f_ref where given (> 0), else the
    MSL 4.1 binding f_ref = c*s_ref (f_ref = 0, the parameter's default, means not given)."""
    return f_ref if f_ref > 0.0 else c * s_ref


def force(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=0.0):
    """(f, f_c, f_d, contact) of the ElastoGap law."""
    if not s_rel < s_rel0:
        return 0.0, 0.0, 0.0, False
    f_ref = reference_force(c, s_ref, f_ref)
    f_c = -f_ref * (abs(s_rel - s_rel0) / s_ref) ** n
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d, f_c, f_d, True


def force_rate(s_rel, v_rel, a_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=0.0):
    """Time derivative df/dt of the ElastoGap force for the relative motion (s, v, a)_rel.

    df_c/dt = n*f_ref/s_ref*|delta/s_ref|^(n-1)*v_rel with delta = s_rel0 - s_rel > 0; the damper
    part contributes d*a_rel while unbounded and -+df_c/dt while bounded (at f_d = f_c the total is
    2*f_c, at f_d = -f_c it is 0)."""
    if not s_rel < s_rel0:
        return 0.0
    f_ref = reference_force(c, s_ref, f_ref)
    delta = (s_rel0 - s_rel) / s_ref
    f_c = -f_ref * delta**n
    dfc = n * f_ref / s_ref * delta ** (n - 1.0) * v_rel if n != 1.0 else f_ref / s_ref * v_rel
    f_d2 = d * v_rel
    if f_d2 < f_c:
        return 2.0 * dfc
    if f_d2 > -f_c:
        return 0.0
    return dfc + d * a_rel


def interface(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=0.0):
    """(df/ds_rel, df/dv_rel) of the ElastoGap law at (s_rel, v_rel): in contact with the damper
    force unbounded (c_s, d) where c_s = n*f_ref/s_ref*|delta/s_ref|^(n-1) is the spring's stiffness;
    with f_d bounded to f_c (fast approach, f = 2*f_c) (2*c_s, 0); bounded to -f_c (fast separation,
    f = 0) and without contact (0, 0)."""
    if not s_rel < s_rel0:
        return 0.0, 0.0
    f_ref = reference_force(c, s_ref, f_ref)
    delta = (s_rel0 - s_rel) / s_ref
    f_c = -f_ref * delta**n
    c_s = f_ref / s_ref * (n * delta ** (n - 1.0) if n != 1.0 else 1.0)
    f_d2 = d * v_rel
    if f_d2 < f_c:
        return 2.0 * c_s, 0.0
    if f_d2 > -f_c:
        return 0.0, 0.0
    return c_s, d


def unmodified_force(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0):
    """The plain spring/damper law the documentation starts from (curve 1 of its figure):
    f = -c*|s_rel - s_rel0|^n + d*v_rel in contact; it pulls at the end of a fast separation."""
    if not s_rel < s_rel0:
        return 0.0
    return -c * abs(s_rel - s_rel0) ** n + d * v_rel


def clipped_force(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0):
    """Curve 2 of the documentation's figure: the plain law set to zero when it would pull;
    discontinuous at the start of contact."""
    return min(unmodified_force(s_rel, v_rel, c, d, s_rel0, n), 0.0)


def predict(x, w, mu, g, times, k, d):
    """Motion of x = s_rel - s_rel0, w = v_rel under the law with n = 1 (k = f_ref/s_ref) for
    the reduced mass mu and the other relative acceleration g (held): segments.follow."""

    def classify(x, w):
        if x >= 0.0:
            return FREE
        if -k * x + d * w < 0.0:
            return APPROACH
        if k * x + d * w > 0.0:
            return SEPARATE
        return LINEAR

    laws = {
        FREE: Region(0.0, 0.0, 0.0, (Exit(1.0, 0.0, 0.0, 1),), False),  # until x < 0
        LINEAR: Region(k, d, 0.0, (Exit(-k, d, 0.0, 1), Exit(k, d, 0.0, -1)), True),
        APPROACH: Region(2.0 * k, 0.0, 0.0, (Exit(-k, d, 0.0, -1),), True),  # f_d bounded: 2*f_c
        SEPARATE: Region(0.0, 0.0, 0.0, (Exit(k, d, 0.0, 1), Exit(1.0, 0.0, 0.0, -1)), False),
    }
    return follow(x, w, mu, g, times, classify, laws.__getitem__)
