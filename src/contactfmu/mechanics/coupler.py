"""The inertia-aware coupling of a contact element with the bodies at its flanges.

The element runs the law's motion of the two bodies itself (its shadow, predicted in closed form)
and holds over each communication step the force that keeps the bodies on that motion
(:func:`couple`); :class:`Coupler` keeps what the element knows between steps, in any master.
:func:`deadbeat_acceleration` is the coupling rule: the constant relative acceleration over the
next communication step after which a held acceleration over the step that follows brings the
bodies exactly to a target state two steps ahead.

Standard library only: this module runs inside the FMUs.
"""

from typing import NamedTuple

from .motion import first_change, work_budget


class Shadow(NamedTuple):
    """The law's own motion, which the bodies follow (see couple): the relative position and
    velocity, the number of steps it spent entirely without transmitting a force, and the law's
    discrete state (None: a law without one)."""

    x: float
    w: float
    free_steps: int
    state: object


class Prediction(NamedTuple):
    """A law's motion as its predict(x, w, g, state, times) gives it: the states at the times
    [(x, w[, state])], the first time it transmits a force (onset; None: not up to the last
    time), its number of changes, and the law's own record of it (detail; None: none)."""

    states: list
    onset: object
    changes: int
    detail: object = None


def reduced_mass(m_a, m_b):
    """Reduced mass of two bodies; 0 stands for a fixed body (infinite mass). None if both are fixed."""
    inv = (1.0 / m_a if m_a > 0.0 else 0.0) + (1.0 / m_b if m_b > 0.0 else 0.0)
    return 1.0 / inv if inv > 0.0 else None


def stiffness_number(mu, h, c, d):
    """h times the fastest rate of a contact mu*x'' + d*x' + c*x (> 1: a step cannot resolve it)."""
    return h * max(d / mu, (c / mu) ** 0.5)


def planning_step(v_rel, last_v_rel, last_force, mu, last_h, default_h):
    """(h, g) an element plans the next step with: the size of the last step and the bodies' mean
    relative acceleration over it without this element's force (x'' = g - F/mu, F held); before
    any step, default_h and g = 0."""
    if last_h > 0.0:
        return last_h, (v_rel - last_v_rel) / last_h + last_force / mu
    return default_h, 0.0


def deadbeat_acceleration(x0, w0, x2, w2, h):
    """Constant acceleration over [0, h] such that, with a constant acceleration over [h, 2h]
    chosen next, the motion from (x0, w0) reaches (x2, w2) at 2h exactly.

    From x(2h) = x0 + 2h*w0 + 1.5*h^2*a1 + 0.5*h^2*a2 and w(2h) = w0 + h*(a1 + a2)."""
    return (x2 - x0 - 1.5 * h * w0 - 0.5 * h * w2) / (h * h)


def advance_shadow(shadow, h, predict, at_event=False):
    """The shadow one step of length h later, and the prediction that moved it.

    shadow: None or a Shadow. Returns (shadow, prediction: a Prediction); the shadow is None once
    it has been free for two steps (the bodies have caught up with it and the actual motion is the
    law's again). at_event: the step ended early at an event of the law (its region changes
    there): not a free step."""
    if shadow is None:
        return None, None
    prediction = Prediction(*predict(shadow.x, shadow.w, shadow.state, (h,)))
    x, w, *rest = prediction.states[0]
    free = shadow.free_steps + 1 if prediction.onset is None and not at_event else 0
    return (None if free >= 2 else Shadow(x, w, free, rest[0] if rest else None)), prediction


def couple(x, w, mu, g, h, shadow, predict, stiff, state=None, pushes_only=False):
    """One communication point of the inertia-aware coupling of a contact element.

    x, w: the relative motion of the bodies now (inputs); mu: their reduced mass; g: their
    relative acceleration from all other forces (held over the step); h: the step.
    shadow: None, or (xs, ws, free_steps, state) (see advance_shadow), the law's own motion,
    integrated by the element since it last transmitted a force, which the bodies follow.
    state: the law's discrete state when there is no shadow.
    predict(x0, w0, state0, times) -> ([(x, w[, state]) at times], onset, changes, ...): the law's
    motion under g, the first time it transmits a force (None: never) and the number of changes.

    Returns (F, shadow): the force on the element's second body (x'' = g - F/mu) to hold over the
    step, and the shadow at this point.
    - No shadow and no force within 1.5 steps: F = 0, the element transmits nothing.
    - A force within 1.5 steps starts the shadow at the present motion: the law then runs in
      the element, exactly (closed form), and keeps the contact's history (penetrations of
      1e-10 m that decide whether a stiff stop holds a body or lets it go, or the state of a
      rigid stop), whatever small errors the bodies' sampled motion has.
    - While the shadow is free and about to hit, or the contact is too stiff for the step: F
      brings the bodies to the shadow's state two steps ahead (deadbeat, re-planned each step):
      the impact is spread over the steps around it and nothing is driven through the stop.
    - In a contact the step resolves, and after a release: F gives the bodies the shadow's
      velocity at the end of the step (impulse-consistent), so a rebound leaves with the law's
      velocity.
    - pushes_only (a law whose force is never > 0: it only pushes the bodies apart): where the
      plan above pulls, on this step or on the next one it plans, F is push_only_plan's.
    """
    if shadow is None:
        prediction = Prediction(*predict(x, w, state, (h, 2.0 * h)))
        if prediction.onset is None or prediction.onset > 1.5 * h:
            return 0.0, None
        shadow = Shadow(x, w, 0, state)
    else:
        prediction = Prediction(*predict(shadow.x, shadow.w, shadow.state, (h, 2.0 * h)))
    (x1, w1, *_), (x2, w2, *_) = prediction.states
    onset = prediction.onset
    deadbeat = stiff or (onset is not None and onset > 0.0)
    if deadbeat:
        a = deadbeat_acceleration(x, w, x2, w2, h)
        noise = _EPS4 * (abs(x2) + abs(x) + 1.5 * h * abs(w) + 0.5 * h * abs(w2)) / (h * h)
    else:
        a = (w1 - w) / h
        noise = _EPS4 * (abs(w1) + abs(w)) / h
    # a force within the rounding of the velocity arithmetic is 0: a free motion (the law
    # transmits nothing) gives exactly 0, not +-1e-13 N (which a law that only pushes must never show)
    force = 0.0 if abs(g - a) <= noise + _EPS4 * abs(g) else mu * (g - a)
    if pushes_only and (force > 0.0 or (deadbeat and _pulls_next(w, w2, g, a, h, noise))):
        return push_only_plan(x, w, mu, g, h, shadow, predict), shadow
    return force, shadow


def _pulls_next(w, w2, g, a, h, noise):
    """Whether the two-step plan (acceleration a over the step, then (w2 - w)/h - a) pulls on its
    second step (F = mu*(g - a2) > 0 beyond the rounding of the velocity arithmetic)."""
    a2 = (w2 - w) / h - a
    return g - a2 > noise + _EPS4 * (abs(w2) + abs(w)) / h + _EPS4 * abs(g)


PLAN_STEPS = 8  # the longest plan (in steps) push_only_plan looks for


def push_only_plan(x, w, mu, g, h, shadow, predict):
    """The force F <= 0 to hold over the step for a law that never pulls, where the two-step plan
    of couple() pulls.

    Forces F_0 .. F_(N-1) held over the next N steps take the bodies from (x, w) to the shadow's
    state (xN, wN) at N*h exactly if and only if
        S = F_0 + ... + F_(N-1)                    = mu*(w + N*h*g - wN)/h
        M = sum (N - k - 1/2)*F_k                  = mu*(x + N*h*w + (N*h)^2*g/2 - xN)/h^2,
    the impulse and its moment about N*h. With every F_k <= 0 this needs S < 0 and the impulse's
    centre t_c = N - M/S (in steps from now) between the middles of the first and last steps,
    1/2 <= t_c <= N - 1/2; the remaining N - 1 steps can then still land the bodies exactly after
    F_0 if and only if (M - S/2)/(N - 1) <= F_0 <= M - (N - 3/2)*S. The two-step plan (N = 2) pulls
    on its first step where t_c > 3/2 (the law's push comes late in the two steps: a contact that
    starts in the second half of the step, its force rising), on its second where t_c < 1/2.

    For the shortest N <= PLAN_STEPS with such a plan, F is the law's mean force over the step on
    the shadow, moved into that range: the bodies land on the law's motion within N steps (each
    step re-plans), and receive the law's impulse. Without one, no force that only pushes brings
    the bodies back onto the law's motion: they are separating faster than it (S > 0 for every
    N: any push adds to that), or their push is overdue (t_c < 1/2: they went into the contact
    during a step that held less than the law's force, and a push on the later steps can match
    either the law's impulse or its moment, not both). F then gives the bodies the shadow's
    velocity at the end of the step if that is a push (the law's impulse: the rebound leaves with
    the law's velocity; the bodies stay off the law's motion by the position they gained), else 0
    (the law's motion catches up with the bodies' as it pushes, or the bodies leave faster than
    the law would send them)."""
    times = tuple(h * k for k in range(1, PLAN_STEPS + 1))
    states = predict(shadow.x, shadow.w, shadow.state, times)[0]
    mean = mu * (g - (states[0][1] - shadow.w) / h)
    for n in range(2, PLAN_STEPS + 1):
        xn, wn = states[n - 1][:2]
        span = n * h
        total = mu * (w + span * g - wn) / h
        moment = mu * (x + span * (w + 0.5 * span * g) - xn) / (h * h)
        if not total < 0.0:
            continue
        lo, hi = (moment - 0.5 * total) / (n - 1), min(0.0, moment - (n - 1.5) * total)
        if total <= lo <= hi:
            return min(max(mean, lo), hi)
    a = (states[0][1] - w) / h
    noise = _EPS4 * (abs(states[0][1]) + abs(w)) / h + _EPS4 * abs(g)
    return mu * (g - a) if g - a < -noise else 0.0


_EPS4 = 4.0 * 2.0**-52


class Coupler:
    """The element-side state of the inertia-aware coupling (see couple): the last step's size,
    the bodies' relative velocity at its start and the force they received over it (for
    planning_step), the law's shadow motion, and the bodies' relative motion at the end of the
    last step as the element models it.

    Any master. A Gauss-Seidel master (set inputs, read outputs, step) hands the element the
    bodies' motion of the present point before it reads the force; a Jacobi master (step, read
    outputs, set inputs: libcosim, ecos, an SSP run) reads the force right after the step, while
    the element still holds the inputs of the step's start. The element therefore plans from
    motion(): the inputs if they were set since the last step, else its own model of the bodies
    over that step (their motion at its start, moved by the force they received and the other
    forces' acceleration, held). And it commits the force the bodies actually received, the one
    the master read since the last step (else the one last computed), not one computed later for
    inputs set afterwards. Both masters then see the same forces: exact where the held
    accelerations are.

    predict(x, w, g, state, times) -> ([(x, w[, state])], onset, changes, ...); stiff(h) -> bool.

    Configured by its constructor: mu, the bodies' reduced mass; default_h, the step the first
    step is planned with (the DefaultExperiment step: an FMU learns a step's length only when it
    is taken); state, the initial discrete state of a law whose state outlives its shadow (a
    friction's stick or slip, a stop's detaching phase; None: a law without one): force() then
    settles it at the present motion (its state at time 0 of a prediction) or takes the shadow's,
    plans with it and holds the result until commit(); starts_late = False: commit() never starts a
    shadow for a contact the plan did not see (a law that decides the onset of contact by its
    state alone); pushes_only = True: a law whose force is never > 0 (it only pushes the bodies
    apart), so the held force is never > 0 either (couple). After force(), `moved` is the
    prediction that moved the shadow to the present point (None: no shadow) and `pending_state`
    the law's state there."""

    plan_next = resume_h = 0.0

    def __init__(self, mu, default_h, state=None, starts_late=True, pushes_only=False):
        self.mu, self.default_h = mu, default_h
        self.last_h = self.last_v = self.last_f = 0.0
        self.shadow = self.pending = None
        self.force_now = self.x_now = self.v_now = self.g_now = 0.0
        self.expected = None
        self.state = self.pending_state = state
        self.moved = None
        self.starts_late, self.pushes_only = starts_late, pushes_only
        self.plan_next = 0.0  # see commit()
        self.resume_h = 0.0  # the step an importer asked for before it returned early (events)

    def motion(self, x, w, fresh):
        """The bodies' relative motion now: (x, w), the inputs, if they were set since the last step
        (fresh), else the element's model of it at the end of the last step."""
        if fresh or self.expected is None:
            return x, w
        return self.expected

    def force(self, x, w, predict, stiff):
        """The force (on the element at its second flange) to hold over the next step, for the
        bodies' relative motion (x, w) now (see motion); its predictions share one MAX_WORK."""
        with work_budget():
            return self._force(x, w, predict, stiff)

    def _force(self, x, w, predict, stiff):
        mu = self.mu
        h, g = planning_step(w, self.last_v, self.last_f, mu, self.last_h, self.default_h)

        def law(x0, w0, state, times):
            return predict(x0, w0, g, state, times)

        at_event = self.plan_next > 0.0  # the last step ended early at the law's event
        elapsed = law
        if at_event:
            g_event = self.g_now

            def elapsed(x0, w0, state, times):  # as the event was located
                return predict(x0, w0, g_event, state, times)

        shadow, self.moved = advance_shadow(self.shadow, h, elapsed, at_event)
        state = self.state
        if state is not None:
            # the shadow's state after the step, else the held state settled at the present motion
            moved = self.moved if self.moved is not None else Prediction(*law(x, w, state, (0.0,)))
            state = moved.states[0][2]
        h = self.plan_next or h  # the step to plan for (see commit)
        force, shadow = couple(x, w, mu, g, h, shadow, law, stiff(h), state, self.pushes_only)
        self.pending = shadow
        self.pending_state = shadow.state if shadow is not None else state
        self.force_now, self.x_now, self.v_now, self.g_now = force, x, w, g
        return force

    def commit(self, h, predict, x=None, w=None, delivered=None, plan_next=None):
        """The step [t, t + h] was taken: the bodies' relative motion at t was (x, w) (motion();
        default: the one the force was last computed for) and they received the force delivered
        over it (the value the master read since the last step; default: the force last computed).

        A step longer than the one planned with (the first step is planned with the
        DefaultExperiment step size, since the FMU learns a step's length only when it is taken)
        may hold a contact the plan did not see: then the shadow starts at the step's start, as
        if the contact had been seen. plan_next: the step to plan the next one with, where this
        one ended early at an event (default: h, as for any step)."""
        if x is None:
            x, w = self.x_now, self.v_now
        if delivered is None:
            delivered = self.force_now
        if plan_next and self.pending is None:
            # ended early at the law's event on the bodies' free motion: the law's motion starts
            # at the step's start, so that it has taken the event at the step's end
            self.pending = Shadow(self.x_now, self.v_now, 0, self.pending_state)
        elif self.starts_late and self.pending is None and self.force_now == 0.0:
            onset = Prediction(*predict(self.x_now, self.v_now, self.g_now, None, (h,))).onset
            if onset is not None and onset <= h:
                self.pending = Shadow(self.x_now, self.v_now, 0, None)
        g = planning_step(w, self.last_v, self.last_f, self.mu, self.last_h, self.default_h)[1]
        self.expected = held_motion(x, w, g - delivered / self.mu, h)
        self.last_h, self.last_v, self.last_f = h, w, delivered
        self.plan_next = plan_next or 0.0
        self.shadow, self.state = self.pending, self.pending_state

    def first_event(self, count, start, h):
        """The time in (start, h] of the law's first event (contact, release, a stop's or a
        friction's state change, an impact) after `start` along the motion it follows over the
        next step: the shadow's, else the bodies' free motion, under the planned acceleration;
        None if none. count(x, w, g, state, t): the law's number of events from (x, w) up to t."""
        x, w = (
            (self.pending.x, self.pending.w)
            if self.pending is not None
            else (self.x_now, self.v_now)
        )
        state, g = self.pending_state, self.g_now

        def changes(t):
            return count(x, w, g, state, t) if t > 0.0 else 0

        before = changes(start)
        return first_change(lambda t: changes(t) > before, start, (h,))


def held_motion(x, w, a, h):
    """(x, w) after h under the held acceleration a, from (x, w)."""
    return x + h * (w + 0.5 * h * a), w + h * a
