"""Monolithic reference solutions (scipy, tight tolerances, event location) that the tests,
examples and benchmarks compare co-simulations against. Not bundled into any FMU.

Independent of the FMUs' physics: this module imports nothing from the FMUs' code
(contactfmu.components, .mechanics, .fmi) (tests/test_reference_independence.py checks it). The contact laws are written
out here again from the components' documentation, so that a reference checks the law the FMU
runs and not only the coupling around it:

* ElastoGap, MSL 4.1 Translational.Components.ElastoGap (equations of the model):
      contact = s_rel < s_rel0
      f_c  = -f_ref*|(s_rel - s_rel0)/s_ref|^n        (f_ref = c*s_ref by default, s_ref = 1)
      f_d2 = d*v_rel
      f_d  = min(max(f_d2, f_c), -f_c)                (the bounded damper: |f_d| <= |f_c|)
      f    = f_c + f_d  in contact, else 0;  lossPower = f_d*v_rel
  f is flange_b.f: the body at flange_b receives -f, the body at flange_a +f.
* TranslationalHardstop, MapleSim documentation ("Translational Hardstop"), gap width b:
      F = c*(s_rel - b/2) + d*v_rel   for s_rel >  b/2
          c*(s_rel + b/2) + d*v_rel   for s_rel < -b/2
          0                           in between
      F = c*s_rel + d*v_rel           for b <= 2e-10 (plain spring-damper)
  F is flange_b.f (= -flange_a.f).
* MassWithStopAndFriction, MSL 4.1 (friction state machine and stops): see _stribeck_body.
"""

import numpy as np
from scipy.integrate import solve_ivp

HARDSTOP_GAP_MIN = 2e-10  # MapleSim Translational Hardstop: b <= 2e-10 is a plain spring-damper


def _elastogap_law(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=None):
    """(f, f_d) of MSL 4.1 ElastoGap: f = flange_b.f (<= 0), f_d the bounded damper force
    (lossPower = f_d*v_rel). Written from the MSL model's equations (module docstring)."""
    if not s_rel < s_rel0:  # contact = s_rel < s_rel0
        return 0.0, 0.0
    if f_ref is None:
        f_ref = c * s_ref  # MSL default f_ref = c*s_ref
    ratio = (s_rel - s_rel0) / s_ref
    f_c = -f_ref * abs(ratio) ** n
    f_d2 = d * v_rel
    f_d = min(max(f_d2, f_c), -f_c)
    return f_c + f_d, f_d


def elastogap_force(s_rel, v_rel, c, d):
    """f = flange_b.f of ElastoGap (n = 1, s_rel0 = 0): curve 3 of the MSL documentation's figure."""
    return _elastogap_law(s_rel, v_rel, c, d)[0]


def elastogap_unmodified_force(s_rel, v_rel, c, d):
    """Curve 1 of the ElastoGap documentation's figure: the plain spring/damper -c*|s_rel| + d*v_rel
    in contact (s_rel < 0), which pulls at the end of a fast separation."""
    return -c * abs(s_rel) + d * v_rel if s_rel < 0.0 else 0.0


def elastogap_clipped_force(s_rel, v_rel, c, d):
    """Curve 2 of the figure: curve 1 set to zero where it would pull (jumps at contact start)."""
    return min(elastogap_unmodified_force(s_rel, v_rel, c, d), 0.0)


def _hardstop_law(s_rel, v_rel, b, c, d):
    """F = flange_b.f of the MapleSim Translational Hardstop (module docstring): the documented
    piecewise law for b > 2e-10, the plain spring-damper c*s_rel + d*v_rel otherwise."""
    if b <= HARDSTOP_GAP_MIN:
        return c * s_rel + d * v_rel
    if s_rel > 0.5 * b:
        return c * (s_rel - 0.5 * b) + d * v_rel
    if s_rel < -0.5 * b:
        return c * (s_rel + 0.5 * b) + d * v_rel
    return 0.0


def elastogap_impact(
    m=1.0, c=1e5, d=20.0, v0=1.0, n=1.0, s_rel0=0.0, gap=1e-3, rtol=1e-12, atol=1e-15
):
    """A mass m (at flange_b) moving at -v0 towards a fixed wall (flange_a at 0) with an ElastoGap
    between them; it starts `gap` before contact. Returns a dict with the restitution
    (v_out/v0), the contact start/end times, the maximum penetration, the dissipated energy
    (integral of lossPower) and the dense solution."""

    def rhs(t, y):
        x, v, _ = y
        f, f_d = _elastogap_law(x, v, c, d, s_rel0, n)
        return [v, -f / m, f_d * v]  # body at flange_b receives -f; lossPower = f_d*v_rel

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
    sol = solve_ivp(
        rhs,
        (0.0, t_end),
        [x0, -v0, 0.0],
        method="DOP853",
        rtol=rtol,
        atol=atol,
        events=[leave, enter],
        dense_output=True,
        max_step=np.pi / omega / 200,
    )
    if not sol.t_events[0].size:
        raise RuntimeError("the mass did not leave the contact")
    t_out = sol.t_events[0][0]
    v_out = sol.y_events[0][0][1]
    ts = np.linspace(t_in, t_out, 2001)
    return {
        "restitution": v_out / v0,
        "t_in": t_in,
        "t_out": t_out,
        "contact_time": t_out - t_in,
        "penetration": s_rel0 - sol.sol(ts)[0].min(),
        "dissipated": sol.y_events[0][0][2],
        "solution": sol,
    }


def preload(t_eval, stop_time=100.0, rtol=1e-9, atol=1e-12):
    """MSL Translational.Examples.PreLoad solved monolithically (the MSL 4.1 example model).

    States: centres and velocities of springPlateA, springPlateB and spool. Returns a dict of
    the example's signals on t_eval (friction.v_rel, innerContactA.s_rel, innerContactB.s_rel,
    outerContactA.v_rel, outerContactB.s_rel, outerContactB.v_rel, spool.s, force.f)."""
    mA = mB = 10e-3
    mS = 0.150
    gap_i = dict(c=1000e3, d=250.0, s_rel0=0.001)
    gap_o = dict(c=1000e3, d=250.0, s_rel0=0.0015)

    def relative(y):
        sA, vA, sB, vB, sS, vS = y
        return {
            "outerContactA": ((sA - 0.001) + 0.0955, vA),
            "spring": ((sB - 0.001) - (sA + 0.001), vB - vA),
            "innerContactA": ((sA + 0.008) - (sS - 0.10075), vA - vS),
            "innerContactB": ((sS - 0.08925) - (sB - 0.008), vS - vB),
            "outerContactB": (-0.065 - (sB + 0.001), -vB),
            "friction": ((sS - 0.10075) + 0.0955, vS),
        }

    def forces(y):
        r = relative(y)
        return {
            "oA": _elastogap_law(*r["outerContactA"], **gap_o)[0],
            "oB": _elastogap_law(*r["outerContactB"], **gap_o)[0],
            "iA": _elastogap_law(*r["innerContactA"], **gap_i)[0],
            "iB": _elastogap_law(*r["innerContactB"], **gap_i)[0],
            "spring": 20e3 * (r["spring"][0] - 0.025),
        }

    def rhs(t, y):
        F = forces(y)
        drive = 150.0 * np.sin(2 * np.pi * 0.01 * t)
        return [
            y[1],
            (-F["oA"] + F["spring"] - F["iA"]) / mA,
            y[3],
            (-F["spring"] + F["iB"] + F["oB"]) / mB,
            y[5],
            (F["iA"] - F["iB"] - 2500.0 * y[5] + drive) / mS,
        ]

    y0 = [-0.093, 0.0, -0.06925, 0.0, 0.01475, 0.0]
    # LSODA switches to BDF on the stiff contacts; it agrees with Radau to 4e-12 m on spool.s over
    # 10 s and is several thousand times faster here (Radau's numerical Jacobian meets the force kinks)
    sol = solve_ivp(
        rhs,
        (0.0, stop_time),
        y0,
        method="LSODA",
        t_eval=t_eval,
        rtol=rtol,
        atol=atol,
        max_step=0.01,
    )
    if not sol.success:
        raise RuntimeError(f"PreLoad reference failed: {sol.message}")
    out = {
        name: []
        for name in (
            "friction.v_rel",
            "innerContactA.s_rel",
            "innerContactB.s_rel",
            "outerContactA.v_rel",
            "outerContactB.s_rel",
            "outerContactB.v_rel",
        )
    }
    for y in sol.y.T:
        r = relative(y)
        out["friction.v_rel"].append(r["friction"][1])
        out["innerContactA.s_rel"].append(r["innerContactA"][0])
        out["innerContactB.s_rel"].append(r["innerContactB"][0])
        out["outerContactA.v_rel"].append(r["outerContactA"][1])
        out["outerContactB.s_rel"].append(r["outerContactB"][0])
        out["outerContactB.v_rel"].append(r["outerContactB"][1])
    out = {k: np.array(v) for k, v in out.items()}
    out["spool.s"] = sol.y[4]
    out["force.f"] = 150.0 * np.sin(2 * np.pi * 0.01 * sol.t)
    return out


def hardstop_mass(
    t_eval, b=1.0, c=1e10, d=1e10, m=1.0, s0=0.0, v0=1.0, force=None, rtol=1e-10, atol=1e-13
):
    """A mass m at flange_b of a TranslationalHardstop whose flange_a is fixed at 0, pushed by the
    external force force(t) (N, towards +s; default none), from s0, v0. Solved region by region
    (gap / upper stop / lower stop) with Radau and the exact Jacobian, contact changes located
    as terminal events: the documented defaults c = d = 1e10 are too stiff for anything else.
    Returns a dict of t, s, v, F (the law's force, = flange_b.f) on t_eval and the events
    [(time, 'hit'/'release', side)]."""
    half = 0.5 * b
    push = force or (lambda t: 0.0)
    t_eval = np.asarray(t_eval, dtype=float)

    def region_of(x, v):
        if x > half or (x == half and v > 0):
            return 1
        if x < -half or (x == -half and v < 0):
            return -1
        return 0

    def system(region):
        """Right-hand side, Jacobian and contact-change events in the coordinates of the region:
        u = s - xe (penetration, xe = +-b/2) at a stop, so that its 1e-10 m scale keeps its digits."""
        cc, dd = (c, d) if region else (0.0, 0.0)

        def rhs(t, y):
            return [y[1], (push(t) - cc * y[0] - dd * y[1]) / m]

        def jac(t, y):
            return [[0.0, 1.0], [-cc / m, -dd / m]]

        def boundary(level, direction):
            def event(t, y):
                return y[0] - level

            event.terminal, event.direction = True, direction
            return event

        events = (
            [boundary(half, 1), boundary(-half, -1)] if region == 0 else [boundary(0.0, -region)]
        )
        return rhs, jac, events

    t, region = float(t_eval[0]), region_of(s0, v0)
    y = [s0 - half * region, v0]
    xs, vs, log = np.full(t_eval.shape, np.nan), np.full(t_eval.shape, np.nan), []
    while t < t_eval[-1]:
        rhs, jac, events = system(region)
        scale = max(abs(v0), 1e-3)
        sol = solve_ivp(
            rhs,
            (t, t_eval[-1]),
            y,
            method="Radau",
            jac=jac,
            rtol=rtol,
            atol=[atol if region == 0 else atol * 1e-3, atol * scale * 10],
            events=events,
            dense_output=True,
        )
        if sol.status < 0:
            raise RuntimeError(f"hardstop reference failed at t = {t}: {sol.message}")
        t_end = sol.t[-1]
        mask = (t_eval >= t) & (t_eval <= t_end)
        u, vs[mask] = sol.sol(t_eval[mask])
        xs[mask] = u + half * region
        if sol.status == 1:  # a contact change: continue exactly on the boundary, in the new region
            k = next(k for k, te in enumerate(sol.t_events) if te.size)
            v = sol.y_events[k][0][1]
            if region == 0:
                region = 1 if k == 0 else -1
                log.append((t_end, "hit", region))
                y = [0.0, v]  # penetration 0 at the stop just hit
            else:
                log.append((t_end, "release", region))
                y = [half * region, v]  # on the boundary of the stop just left
                region = 0
        t = t_end
    F = np.array([_hardstop_law(x, v, b, c, d) for x, v in zip(xs, vs)])
    return {"t": t_eval, "s": xs, "v": vs, "F": F, "events": log}


def _stribeck_body(
    force,
    s0,
    v0,
    t_end,
    m,
    F_prop,
    F_Coulomb,
    F_Stribeck,
    fexp,
    smin,
    smax,
    L,
    rtol,
    atol,
    max_step,
):
    """One MassWithStopAndFriction (the MSL 4.1 component) under the external force
    force(t, s) (N, towards +s), solved mode by mode: returns its segments
    [(t0, t1, mode, dense solution or None, stuck position)] and the event log [(t, kind)].

    Forward/Backward: m*a = F - (F_prop*v +- (F_Coulomb + F_Stribeck*exp(-fexp*|v|))), ended by
    v = 0 (-> Stuck, then breakaway re-checked at the same instant) or by a stop (reinit s to the
    limit, v := 0, Stuck). Stuck: v = 0, sa = F (the force needed to stick); breakaway when
    sa > f0_max with s < hi, or sa < -f0_max with s > lo (f0_max = 1.001*f0). The startForward /
    startBackward instants last until v leaves 0, i.e. zero time here, so they are merged into the
    sliding modes (both laws give f0 at v = 0). Leaving a stop is no mode change."""
    FORWARD, STUCK, BACKWARD = 1, 0, -1
    f0 = F_Coulomb + F_Stribeck
    f0_max = 1.001 * f0
    lo, hi = smin + 0.5 * L, smax - 0.5 * L

    def terminal(fun, direction):
        fun.terminal, fun.direction = True, direction
        return fun

    def sliding(direction):
        def rhs(t, y):
            s, v = y
            # the smooth continuation of exp(-fexp*|v|) through v = 0 keeps the root finding clean
            f = F_prop * v + direction * (F_Coulomb + F_Stribeck * np.exp(-fexp * direction * v))
            return [v, (force(t, s) - f) / m]

        halt = terminal(lambda t, y: y[1], -direction)  # v returns to 0
        limit = hi if direction > 0 else lo
        stop = terminal(lambda t, y: y[0] - limit, direction)  # the stop ahead
        return rhs, [halt, stop], ["v = 0", "stop"]

    def stuck(s):
        def rhs(t, y):
            return [0.0, 0.0]

        events, kinds = [], []
        if s < hi:
            events.append(terminal(lambda t, y: force(t, y[0]) - f0_max, 1))
            kinds.append("breakaway forward")
        if s > lo:
            events.append(terminal(lambda t, y: force(t, y[0]) + f0_max, -1))
            kinds.append("breakaway backward")
        return rhs, events, kinds

    def settle(t, s):
        """Mode of a body at rest (v = 0) after an event: the breakaway test of pre(mode) = Stuck."""
        sa = force(t, s)
        if sa > f0_max and s < hi:
            return FORWARD
        if sa < -f0_max and s > lo:
            return BACKWARD
        return STUCK

    t, s, v = 0.0, float(s0), float(v0)
    # initialization + t = 0+ iteration
    mode = FORWARD if v > 0 else BACKWARD if v < 0 else settle(t, s)
    segments, log = [], []
    while t < t_end:
        rhs, events, kinds = sliding(mode) if mode != STUCK else stuck(s)
        sol = solve_ivp(
            rhs,
            (t, t_end),
            [s, v],
            method="DOP853",
            rtol=rtol,
            atol=atol,
            events=events,
            dense_output=True,
            max_step=max_step,
        )
        if sol.status < 0:
            raise RuntimeError(f"Friction reference failed at t = {t}: {sol.message}")
        t1 = float(sol.t[-1])
        segments.append((t, t1, mode, sol.sol if mode != STUCK else None, s))
        if sol.status == 0:
            break
        k = next(k for k, te in enumerate(sol.t_events) if te.size)
        s, v = sol.y_events[k][0]
        t, kind = t1, kinds[k]
        if mode == STUCK:  # breakaway: the crossing makes |sa| > f0_max just after
            mode = FORWARD if kind == "breakaway forward" else BACKWARD
            v = 0.0
            log.append((t, kind))
            continue
        if kind == "stop":  # when stopped <> 0: reinit(s, limit); reinit(v, 0)
            s = hi if mode == FORWARD else lo
            log.append((t, "hits the " + ("right" if mode == FORWARD else "left") + " stop"))
        else:
            log.append((t, "v = 0"))
        v = 0.0
        mode = settle(t, s)
        if mode != STUCK:
            log.append((t, "breakaway " + ("forward" if mode == FORWARD else "backward")))
        elif kind != "stop":
            log[-1] = (t, "sticks")
    return segments, log


def _sample(segments, t_eval, force, m, F_prop, F_Coulomb, F_Stribeck, fexp):
    """s, v, friction force f and mode of a body's segments on t_eval (a point on an event takes
    the segment that starts there, i.e. the value after the event)."""
    s = np.full(t_eval.shape, np.nan)
    v, f, mode = s.copy(), s.copy(), s.copy()
    last = len(segments) - 1
    for i, (t0, t1, md, sol, s_stuck) in enumerate(segments):
        mask = (t_eval >= t0) & ((t_eval < t1) | ((i == last) & (t_eval <= t1)))
        if not mask.any():
            continue
        tt = t_eval[mask]
        mode[mask] = md
        if md == 0:  # locked: a = 0, so f = sa = the applied force
            s[mask], v[mask] = s_stuck, 0.0
            f[mask] = [force(ti, s_stuck) for ti in tt]
        else:
            s[mask], v[mask] = sol(tt)
            f[mask] = F_prop * v[mask] + md * (
                F_Coulomb + F_Stribeck * np.exp(-fexp * np.abs(v[mask]))
            )
    return s, v, f, mode


def friction(t_eval, stop_time=5.0, rtol=1e-10, atol=1e-12):
    """MSL Translational.Examples.Friction, parts stop1 and stop2, solved monolithically
    (the MSL 4.1 component and example Friction), independently of the FMUs' physics.

    stop1: MassWithStopAndFriction (m = 1, L = 1, F_prop = 1, F_Coulomb = 5, F_Stribeck = 10,
    fexp = 2, stops at +-25) at rest, driven by 25*sin(2*pi*0.25*t) N. stop2: the same with
    F_Coulomb = 3, F_Stribeck = 5 and stops at +-0.9, tied by a spring (c = 500, s_rel0 = 1) from a
    fixed point at -1.75 m to its flange_a (s - L/2), i.e. the force -500*(s + 0.25) N; it starts at
    s = 0 with v = -5 m/s. The bodies are uncoupled; each is integrated mode by mode with DOP853,
    its mode changes located as solve_ivp events.

    Returns a dict of arrays on t_eval (ascending, within [0, stop_time]): stop1.s, stop1.v,
    stop1.f (friction force, = the driving force while stuck), stop1.mode, stop2.s, stop2.v,
    stop2.f, stop2.mode (Forward 1, Stuck 0, Backward -1: the mode between events, the value
    after an event on an event instant); "events": the sorted distinct event times of stop2
    (stop impacts, v = 0 reversals and sticking, breakaways; an impact and the breakaway at the
    same instant count once); "event_log": [(time, body, kind)] of both bodies, in order."""
    t_eval = np.asarray(t_eval, dtype=float)
    if (
        t_eval.ndim != 1
        or not t_eval.size
        or np.any(np.diff(t_eval) < 0)
        or t_eval[0] < 0
        or t_eval[-1] > stop_time
    ):
        raise ValueError("t_eval must be a non-empty ascending array within [0, stop_time]")
    common = dict(m=1.0, F_prop=1.0, fexp=2.0)
    bodies = {
        "stop1": (
            lambda t, s: 25.0 * np.sin(2 * np.pi * 0.25 * t),
            dict(common, F_Coulomb=5.0, F_Stribeck=10.0),
            dict(s0=0.0, v0=0.0, smin=-25.0, smax=25.0),
            0.05,
        ),  # stuck phases last up to seconds: bounded steps keep sin(t) crossings apart
        "stop2": (
            lambda t, s: -500.0 * (s + 0.25),
            dict(common, F_Coulomb=3.0, F_Stribeck=5.0),
            dict(s0=0.0, v0=-5.0, smin=-0.9, smax=0.9),
            np.inf,
        ),
    }
    out, log = {}, []
    for name, (force, law, start, max_step) in bodies.items():
        segments, events = _stribeck_body(
            force, t_end=stop_time, L=1.0, rtol=rtol, atol=atol, max_step=max_step, **law, **start
        )
        s, v, f, mode = _sample(segments, t_eval, force, **law)
        out.update({f"{name}.s": s, f"{name}.v": v, f"{name}.f": f, f"{name}.mode": mode})
        log += [(t, name, kind) for t, kind in events]
    out["events"] = sorted({t for t, body, _ in log if body == "stop2"})
    out["event_log"] = sorted(log, key=lambda e: e[0])
    return out
