"""Reference motions of a body of mass mu, independent of contactfmu: a linear piece
mu*x'' = mu*g - c*(x - xe) - d*x' by the matrix exponential (reference_state), and a body on a
contact law, mu*x'' = mu*g - law(x, x'), by scipy's solve_ivp (simulate). The references the
laws' predictions and mechanics.motion's pieces are checked against.
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm


def reference_state(x0, w0, mu, g, c, d, xe, t):
    """mu*x'' = mu*g - c*(x - xe) - d*x' by the matrix exponential of the augmented system."""
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    z = expm(a * t) @ np.array([x0, w0, 1.0])
    return z[0], z[1]


def simulate(law, x0, w0, mu, g, times, t_max_step=1e-4):
    sol = solve_ivp(
        lambda t, y: [y[1], g - law(y[0], y[1]) / mu],
        (0.0, times[-1]),
        [x0, w0],
        t_eval=times,
        rtol=1e-11,
        atol=1e-13,
        max_step=t_max_step,
        method="DOP853",
    )
    return list(zip(sol.y[0], sol.y[1]))
