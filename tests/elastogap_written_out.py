"""ElastoGap written out from the MSL 4.1 Translational.Components.ElastoGap documentation,
independently of contactfmu: the force law, its derivatives, and the closed-form restitution of a
linear (n = 1) impact. Imported by the ElastoGap tests and the master's tests.
"""

import math

# ---- the documented law and its analytic consequences, written out independently ----------------


def elastogap_force(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=0.0):
    """(f, f_c, f_d, lossPower) of MSL 4.1 ElastoGap (its documentation, the FMU description)."""
    f_ref = f_ref or c * s_ref  # 0: not given, MSL's binding f_ref = c*s_ref
    if not s_rel < s_rel0:
        return 0.0, 0.0, 0.0, 0.0
    f_c = -f_ref * abs((s_rel - s_rel0) / s_ref) ** n
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d, f_c, f_d, f_d * v_rel


def law_derivatives(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=0.0):
    """(df/ds_rel, df/dv_rel) of `elastogap_force`, by hand. In contact, with k_s = d f_c/ds_rel =
    n*f_ref/s_ref*|delta|^(n-1) (delta = (s_rel0 - s_rel)/s_ref): damper free -> (k_s, d);
    bounded to f_c on a fast approach (f = 2*f_c) -> (2*k_s, 0); bounded to -f_c on a fast
    separation (f = 0) -> (0, 0); no contact -> (0, 0)."""
    f_ref = f_ref or c * s_ref  # 0: not given, MSL's binding f_ref = c*s_ref
    if not s_rel < s_rel0:
        return 0.0, 0.0
    delta = (s_rel0 - s_rel) / s_ref
    f_c = -f_ref * delta**n
    k_s = n * f_ref / s_ref * delta ** (n - 1.0)
    if d * v_rel < f_c:
        return 2.0 * k_s, 0.0
    if d * v_rel > -f_c:
        return 0.0, 0.0
    return k_s, d


def restitution(mu, k, d):
    """Restitution of an impact on the linear (n = 1) ElastoGap, reduced mass mu, stiffness k =
    f_ref/s_ref, in closed form. x = s_rel - s_rel0 < 0 in contact, mu*x'' = -f (body b gets -f,
    body a +f). The motion enters at x = 0 with x' = -v0 (the result is independent of v0: the law
    is homogeneous of degree 1 in (x, x')):
      1. fast approach, d*x' < f_c = k*x: f_d = f_c, mu*x'' = -2*k*x, x = -v0/w1*sin(w1*t),
         w1 = sqrt(2k/mu); ends when d*x' = k*x, i.e. tan(w1*t1) = d*w1/k;
      2. Kelvin-Voigt, mu*x'' + d*x' + k*x = 0 from (x1, v1): x = exp(-sigma*t)*(A*cos + B*sin)(wd*t),
         sigma = d/(2mu), wd = sqrt(k/mu - sigma^2); ends when the damper reaches the other bound,
         d*x' = -k*x (f = k*x + d*x' = 0, before x returns to 0);
      3. f = 0 from then on (x' > 0 constant while -k*x shrinks): free flight, x' stays v2.
    Returns (e = v2/v0, contact time) (contact time = t1 + t2 + |x2|/v2)."""
    v0 = 1.0
    w1 = math.sqrt(2.0 * k / mu)
    t1 = math.atan(d * w1 / k) / w1
    x1, v1 = -v0 / w1 * math.sin(w1 * t1), -v0 * math.cos(w1 * t1)
    sigma = d / (2.0 * mu)
    wd = math.sqrt(k / mu - sigma**2)
    a, b = x1, (v1 + sigma * x1) / wd
    va, vb = b * wd - sigma * a, -a * wd - sigma * b  # x' = exp(-sigma t)*(va*cos + vb*sin)
    p, q = k * a + d * va, k * b + d * vb  # k*x + d*x' = exp(-sigma t)*(p*cos + q*sin)
    phase = math.atan2(-p, q)
    t2 = (phase if phase > 0.0 else phase + math.pi) / wd  # first zero after the start
    x2 = math.exp(-sigma * t2) * (a * math.cos(wd * t2) + b * math.sin(wd * t2))
    v2 = math.exp(-sigma * t2) * (va * math.cos(wd * t2) + vb * math.sin(wd * t2))
    return v2 / v0, t1 + t2 + abs(x2) / v2
