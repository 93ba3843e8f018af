"""ElastoGap: MSL Translational.Components.ElastoGap (v4.1.0), "1D translational spring damper
combination with gap" (msl-reference.md section 2).

    contact = s_rel < s_rel0
    f_c  = -f_ref*|(s_rel - s_rel0)/s_ref|^n         (= -c*|s_rel - s_rel0|^n with s_ref = 1, f_ref = c)
    f_d2 = d*v_rel                                  (unbounded linear damper force)
    f_d  = min(max(f_d2, f_c), -f_c)                (bounded: |f_d| <= |f_c|)
    f    = f_c + f_d      (0 without contact)       lossPower = f_d*v_rel >= 0

f is flange_b.f: f <= 0, the element only pushes the flanges apart; it is continuous at the
start of contact (f_c = 0 there) and never pulls, since |f_d| <= |f_c|.
"""


def force(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=None):
    """(f, f_c, f_d, contact) of the ElastoGap law."""
    if not s_rel < s_rel0:
        return 0.0, 0.0, 0.0, False
    if f_ref is None:
        f_ref = c * s_ref
    f_c = -f_ref * (abs(s_rel - s_rel0) / s_ref) ** n
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d, f_c, f_d, True


def force_rate(s_rel, v_rel, a_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=None):
    """Time derivative df/dt of the ElastoGap force for the relative motion (s, v, a)_rel.

    df_c/dt = n*f_ref/s_ref*|delta/s_ref|^(n-1)*v_rel with delta = s_rel0 - s_rel > 0; the damper
    part contributes d*a_rel while unbounded and -+df_c/dt while bounded (at f_d = f_c the total is
    2*f_c, at f_d = -f_c it is 0)."""
    if not s_rel < s_rel0:
        return 0.0
    if f_ref is None:
        f_ref = c * s_ref
    delta = (s_rel0 - s_rel) / s_ref
    f_c = -f_ref * delta ** n
    dfc = n * f_ref / s_ref * delta ** (n - 1.0) * v_rel if n != 1.0 else f_ref / s_ref * v_rel
    f_d2 = d * v_rel
    if f_d2 < f_c:
        return 2.0 * dfc
    if f_d2 > -f_c:
        return 0.0
    return dfc + d * a_rel


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
