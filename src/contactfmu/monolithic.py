"""Monolithic reference solutions (scipy, tight tolerances, event location) that the tests,
examples and benchmarks compare co-simulations against. Not bundled into any FMU."""
import numpy as np
from scipy.integrate import solve_ivp

from .physics import elastogap


def elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0, n=1.0, s_rel0=0.0, gap=1e-3, rtol=1e-12, atol=1e-15):
    """A mass m (at flange_b) moving at -v0 towards a fixed wall (flange_a at 0) with an ElastoGap
    between them; it starts `gap` before contact. Returns a dict with the restitution
    (v_out/v0), the contact start/end times, the maximum penetration, the dissipated energy
    (integral of lossPower) and the dense solution."""

    def rhs(t, y):
        x, v, _ = y
        f, _, f_d, _ = elastogap.force(x, v, c, d, s_rel0, n)
        return [v, -f / m, f_d * v]          # body at flange_b receives -f; lossPower = f_d*v_rel

    def leave(t, y):
        return y[0] - s_rel0
    leave.direction = 1
    leave.terminal = True

    def enter(t, y):
        return y[0] - s_rel0
    enter.direction = -1

    x0 = s_rel0 + gap
    t_in = gap / v0
    omega = np.sqrt(c / m)
    t_end = t_in + 50 * np.pi / omega * max(1.0, 1.0 / max(n - 0.5, 0.5))
    sol = solve_ivp(rhs, (0.0, t_end), [x0, -v0, 0.0], method="DOP853", rtol=rtol, atol=atol,
                    events=[leave, enter], dense_output=True, max_step=np.pi / omega / 200)
    if not sol.t_events[0].size:
        raise RuntimeError("the mass did not leave the contact")
    t_out = sol.t_events[0][0]
    v_out = sol.y_events[0][0][1]
    ts = np.linspace(t_in, t_out, 2001)
    return {"restitution": v_out / v0, "t_in": t_in, "t_out": t_out, "contact_time": t_out - t_in,
            "penetration": s_rel0 - sol.sol(ts)[0].min(), "dissipated": sol.y_events[0][0][2],
            "solution": sol}
