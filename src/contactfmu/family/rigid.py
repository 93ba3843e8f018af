"""The rigid EndStop of the family's reference (SimulationX Mechanics.Translation.EndStop, mode =
"Rigid End Stop"), written from its documentation: the law's states and guards, the forces that
hold the bodies in permanent contact, and the impacts.

With dx = s_rel, dv = v_rel and Fi = f (flange_b.f, ctr1.F), as in reference.py:

* free (0): no force; reaching a stop, dx = l1 closing (dv > 0) or dx = -l2 (dv < 0), is an impact:
  the relative velocity reversed times ci (kind 1 plastic: 0; 2 elastic: 1; 3 ci), the momentum of
  the bodies conserved (a wall: infinite mass). If |dv'| <= eps_dv the contact is permanent.
* permanent contact at stop 1 (1) or 2 (2): a holonomic constraint, dv = 0 and da = 0; Fi is the
  force that holds the bodies on it (> 0 at stop 1, < 0 at stop 2), solved with every other held
  contact of the network at once. Separation when Fi <= -eps_Fi (stop 1), Fi >= eps_Fi (stop 2).
* leaving stop 1 (11) or 2 (21), after a rebound or a separation: free, the stop left behind
  guarded by the relative velocity (its distance starts at zero); free (0) once dv turns back.
  So a rebound that the drive brings back (chattering: rebounds ci^k*dv decaying) is one event per
  rebound and one per impact, and ends at the first rebound within eps_dv.

An impact acts on every held contact at once, as the documentation's eps_dI paragraph describes
(momentum "transferred to adjacent end stops ... causing them to lose contact"): the impulses are
solved together, the impacting contacts to -ci times their approach velocity (0 within eps_dv),
the held ones to dv' = 0 with an impulse that pushes into their stop; a held contact that would
need a pulling impulse is released (leaving, 11 or 21) and the impulses solved again.
"""

import numpy as np

FREE, STOP1, STOP2, LEAVING1, LEAVING2 = 0, 1, 2, 11, 21
HIT1, HIT2 = 101, 102  # an impact at stop 1 or 2, pending until `impacts` resolves it
HELD = (STOP1, STOP2)


class RigidEndStop:
    """The law of one rigid EndStop: its guards (> 0 while the state holds) and its next state."""

    def __init__(self, l1, l2, ci, eps_dv, eps_Fi):
        self.l1, self.l2, self.ci, self.eps_dv, self.eps_Fi = l1, l2, ci, eps_dv, eps_Fi

    @classmethod
    def of(cls, name, p):
        """The law of an EndStop link's parameters `p` (mode 1); `name` for the messages."""
        if p.get("friction", False):
            raise ValueError(f"{name}: the reference knows the rigid EndStop without friction only")
        kind = p.get("kind", 3)
        ci = {1: 0.0, 2: 1.0}.get(kind, p.get("ci", 0.8))
        if not 0.0 <= ci <= 1.0:
            raise ValueError(f"{name}: ci = {ci}: must be in [0, 1]")
        if p["l1"] + p["l2"] < 0.0:
            raise ValueError(f"{name}: l1 + l2 < 0 (both stops engaged) is not in the reference")
        return cls(p["l1"], p["l2"], ci, p.get("eps_dv", 1e-4), p.get("eps_Fi", 1e-6))

    def force(self, s, v, state):
        return 0.0  # (a held contact's force is the network's: hold)

    def guards(self, s, v, state, f):
        if state == FREE:
            return (self.l1 - s, s + self.l2)
        if state == LEAVING1:
            return (-v, s + self.l2)
        if state == LEAVING2:
            return (v, self.l1 - s)
        if state == STOP1:
            return (f + self.eps_Fi,)
        return (self.eps_Fi - f,)

    def state(self, s, v, prev):
        return self.decide(s, v, 0.0, prev)

    def decide(self, s, v, f, prev):
        """The state after an event from `prev`, on the motion (s, v) and the holding force f a
        little past it."""
        if prev == STOP1:
            return LEAVING1 if f + self.eps_Fi <= 0.0 else STOP1
        if prev == STOP2:
            return LEAVING2 if self.eps_Fi - f <= 0.0 else STOP2
        if prev == LEAVING1 and s > -self.l2 and v < 0.0:
            return LEAVING1
        if prev == LEAVING2 and s < self.l1 and v > 0.0:
            return LEAVING2
        return HIT1 if s >= self.l1 else HIT2 if s <= -self.l2 else FREE


def _coupling(pairs, inv_mass):
    """The matrix that maps the forces (or impulses) of the contacts `pairs` [(ia, ib), body
    index or -1 for a wall] to their relative accelerations (velocity changes): a contact's f acts
    as +f on body a and -f on body b."""
    n = len(pairs)
    A = np.zeros((n, n))
    for k, (ak, bk) in enumerate(pairs):
        for j, (aj, bj) in enumerate(pairs):
            for node, sign in ((bk, 1.0), (ak, -1.0)):
                if node >= 0:
                    A[k, j] += sign * inv_mass[node] * ((node == aj) - (node == bj))
    return A


def hold(pairs, inv_mass, accel):
    """The forces of the held contacts `pairs` that keep their relative accelerations zero, the
    bodies' accelerations without them being `accel` (least squares: a closed loop of held
    contacts is redundant)."""
    A = _coupling(pairs, inv_mass)
    rhs = np.array(
        [-((accel[b] if b >= 0 else 0.0) - (accel[a] if a >= 0 else 0.0)) for a, b in pairs]
    )
    return np.linalg.lstsq(A, rhs, rcond=None)[0]


def impacts(laws, ends, inv_mass, y, link_states, n):
    """Resolve the pending impacts (HIT1, HIT2) of the rigid contacts: the bodies' velocities in
    `y` (positions first, n of them) changed in place, the states after the impacts returned. A
    contact reached at |dv| within eps_dv (at rest on it, say) is permanent at once; the holding
    force then decides whether it stays.
    `laws`, `ends` per link (rigid ones only are looked at), `ends` = (index of a or -1, ...)."""
    states = list(link_states)
    rigid = [k for k, law in enumerate(laws) if isinstance(law, RigidEndStop)]
    if not any(states[k] in (HIT1, HIT2) for k in rigid):
        return states

    def dv(k):
        ia, _, ib, _, _ = ends[k]
        return (y[n + ib] if ib >= 0 else 0.0) - (y[n + ia] if ia >= 0 else 0.0)

    target, side = {}, {}
    for k in rigid:
        if states[k] in (HIT1, HIT2):
            side[k] = 1 if states[k] == HIT1 else 2
            after = -laws[k].ci * dv(k)
            closing = dv(k) > 0.0 if side[k] == 1 else dv(k) < 0.0
            if not closing and abs(dv(k)) > laws[k].eps_dv:  # (leaving already: no impulse)
                states[k] = LEAVING1 if side[k] == 1 else LEAVING2
                continue
            target[k] = 0.0 if abs(after) <= laws[k].eps_dv else after
            states[k] = (STOP1 if side[k] == 1 else STOP2) if target[k] == 0.0 else None
        elif states[k] in HELD:
            side[k], target[k] = states[k], 0.0
    if not any(link_states[k] in (HIT1, HIT2) for k in target):
        return states
    for _ in range(len(target) + 1):
        keys = list(target)
        pairs = [(ends[k][0], ends[k][2]) for k in keys]
        A = _coupling(pairs, inv_mass)
        P = np.linalg.lstsq(A, np.array([target[k] - dv(k) for k in keys]), rcond=None)[0]
        # a held contact that needs a pulling impulse lets go (stop 1 holds with P > 0)
        pulled = [
            k
            for k, p in zip(keys, P)
            if link_states[k] in HELD
            and (p < 0.0 if side[k] == 1 else p > 0.0)
            and abs(p) > 1e-12 * (1.0 + float(np.max(np.abs(P))))
        ]
        if not pulled:
            break
        for k in pulled:
            del target[k]
            states[k] = LEAVING1 if side[k] == 1 else LEAVING2
    for (ia, ib), p in zip(pairs, P):
        if ia >= 0:
            y[n + ia] += p * inv_mass[ia]
        if ib >= 0:
            y[n + ib] -= p * inv_mass[ib]
    for k in keys:
        if states[k] is None:
            states[k] = LEAVING1 if side[k] == 1 else LEAVING2
    return states
