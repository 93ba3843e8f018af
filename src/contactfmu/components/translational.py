"""The translational vocabulary of the component slaves, between the generic FMI layer (fmi/)
and the physics (mechanics/): flanges as FMI variables (docs/conventions.md),
forces summed at a node, the outputs of rigid bodies and two-flange compliant elements, the
interface outputs a master reads (contactfmu.conventions), and the remedy hints of a stiff law
sampled at too large a step.

Bundled into every FMU: standard library and pythonfmu only."""

import math
import operator

from ..conventions import (
    FLANGE_MEMBERS,
    FORCE_INPUTS_PER_FLANGE,
    INERTIA,
    INTEGRATES,
    INTERFACE,
    port,
)
from ..fmi.slave import Slave
from ..fmi.terminals import SIGNAL, Member, Terminal, flow_kind
from ..fmi.variables import inp, out
from ..mechanics.coupler import Coupler, reduced_mass
from ..mechanics.motion import first_change

# The connector types of the documentation (a flange's terminal names its type in its description)
MSL_FLANGE_A = "Modelica.Mechanics.Translational.Interfaces.Flange_a"
MSL_FLANGE_B = "Modelica.Mechanics.Translational.Interfaces.Flange_b"
# The terminalKind of both: the MSL connector they extend (s, flow f), whose members they share;
# Flange_a and Flange_b differ in their icon only. One kind for both, so that an importer that
# plugs terminals of equal terminalKind only (fmu-manipulation-toolbox) plugs flange_b to flange_a
MSL_FLANGE = "Modelica.Mechanics.Translational.Interfaces.Flange"
TERMINAL_KINDS = {MSL_FLANGE_A: MSL_FLANGE, MSL_FLANGE_B: MSL_FLANGE}


def motion_in_flange(flange, what):
    """Flange of a compliant element: motion in (s, v, a), force out. ``what`` names the element."""
    return [
        inp(
            flange + ".s",
            0.0,
            "m",
            f"Absolute position of {flange} (input: motion of the connected body)",
        ),
        inp(flange + ".v", 0.0, "m/s", f"Absolute velocity of {flange} (input)"),
        inp(
            flange + ".a",
            0.0,
            "m/s2",
            f"Absolute acceleration of {flange} (input; 0 = no information)",
        ),
    ]


def interface_outputs(depends):
    """Interface stiffness and damping of a two-flange compliant element: the partial derivatives
    of its force f = flange_b.f with respect to s_rel and v_rel at the present inputs. A master
    can use them to make the coupling implicit (contactfmu's scheme="implicit"); the element's
    own behaviour does not depend on them."""
    return [
        out(
            INTERFACE[0],
            "N/m",
            "Interface stiffness: df/ds_rel (f = flange_b.f) at the present inputs, for "
            "masters that couple implicitly (0 where f does not depend on s_rel)",
            depends=depends,
        ),
        out(
            INTERFACE[1],
            "N.s/m",
            "Interface damping: df/dv_rel at the present inputs, for masters that "
            "couple implicitly (0 where f does not depend on v_rel)",
            depends=depends,
        ),
    ]


def inertia_output():
    """The inertia a body declares to masters (contactfmu.conventions): the mass that the
    forces on its flanges accelerate, for masters that predict its motion (implicit coupling)."""
    return out(
        INERTIA,
        "kg",
        "Interface inertia: the mass the forces on the flanges accelerate (= m), for "
        "masters that couple implicitly",
    )


def integrates_output(given):
    """Whether the element integrates its contact itself, declared to masters (contactfmu.
    conventions): with the attached inertias `given` (parameter names) it holds its own coupling force
    over each step and locates its own events; a master must not linearize or probe it."""
    return out(
        INTEGRATES,
        None,
        f"true if the element integrates the contact itself ({' or '.join(given)} > 0): it then holds "
        f"its own coupling force over each step and locates its own events, so a master must neither "
        f"linearize nor probe it; false: its outputs are the law at the present inputs",
        kind="Boolean",
    )


def force_inputs(flange):
    """Names of the force inputs of an inertial flange: <flange>.f and the numbered extra inputs
    <flange>.f2 .. .f4, summed by the body. A master that sums the forces of a node (the project's)
    uses <flange>.f alone; tools that connect one output to one input (SSP, libcosim) connect up to
    four compliant elements on a node, one to each."""
    return (flange + ".f",) + tuple(f"{flange}.f{k}" for k in range(2, FORCE_INPUTS_PER_FLANGE + 1))


# the force inputs (and their derivatives) of a flange, read in one call, per flange attribute
_FORCE_ATTRS = {
    fl: operator.attrgetter(*(n.replace(".", "_") for n in force_inputs(fl)))
    for fl in ("flange", "flange_a", "flange_b")
}
_FORCE_RATE_ATTRS = {
    fl: operator.attrgetter(*("der_" + n.replace(".", "_") for n in force_inputs(fl)))
    for fl in ("flange", "flange_a", "flange_b")
}


def force_in_flange(flange):
    """Flange of an inertial element: force in, motion out (outputs declared by the slave)."""
    first, *extra = force_inputs(flange)
    return [
        inp(
            first,
            0.0,
            "N",
            f"Cut force at {flange}: the force acting on the connected compliant element at this flange "
            f"(MSL flange.f of that element, or the sum over all elements on the node); "
            f"the body receives its negative",
        )
    ] + [
        inp(
            name,
            0.0,
            "N",
            f"Cut force at {flange} of a further compliant element on the node (added to {first}; for "
            f"tools that connect one output to one input, e.g. SSP and libcosim; 0 if unused)",
        )
        for name in extra
    ]


def flange_motion_outputs(depends):
    """Motion outputs of the two flanges of a rigid body (MSL PartialRigid): flange_a.s = s - L/2,
    flange_b.s = s + L/2, same v and a; `depends`: the inputs a depends on directly."""
    return [
        out("flange_a.s", "m", "Position of left flange (= s - L/2)"),
        out("flange_a.v", "m/s", "Velocity of left flange (= v)"),
        out("flange_a.a", "m/s2", "Acceleration of left flange (= a)", depends=depends),
        out("flange_b.s", "m", "Position of right flange (= s + L/2)"),
        out("flange_b.v", "m/s", "Velocity of right flange (= v)"),
        out("flange_b.a", "m/s2", "Acceleration of right flange (= a)", depends=depends),
    ]


def sampled_law_remedy(c, d, step_size, inertia=None):
    """Remedy hint of a compliant element that outputs its law (stiffness c, damping d) at the
    sampled inputs, for ``remedy()``. The master holds that force over the step (or makes it
    linear); against a body of mass m the damper alone is then unstable above h = 2*m/d
    (|1 - h*d/m| > 1), and the spring needs h*sqrt(c/m) well below 1. The element does not know
    m unless told: ``inertia`` = (parameters, what they are), e.g. ("m_a/m_b", "the masses at the
    flanges"); None for an element without them."""
    bounds = []
    if d > 0.0:
        bound = f"below 2*m/d (= {2.0 / d:.3g} s for m = 1 kg"
        if step_size:
            bound += f"; at h = {step_size:.3g} s only for m > h*d/2 = {0.5 * step_size * d:.3g} kg"
        bounds.append(bound + ")")
    if c > 0.0:
        bounds.append(f"well below sqrt(m/c) (= {1.0 / math.sqrt(c):.3g} s for m = 1 kg)")
    if not bounds:
        return ""
    step = "a communication step " + " and ".join(bounds)
    limits = (["the damper alone is unstable above h = 2*m/d"] if d > 0.0 else []) + (
        ["the spring needs h*sqrt(c/m) well below 1"] if c > 0.0 else []
    )
    why = (
        f"the element outputs its law (c = {c:.6g} N/m, d = {d:.6g} N.s/m) at the sampled inputs, the master "
        f"holds that force over the step, and against a mass m {' and '.join(limits)}"
    )
    if inertia:
        names, meaning = inertia
        return (
            f"Remedy: give {names} ({meaning}) or {step}. With {names} = 0 {why}; the element does not know m "
            f"without {names}."
        )
    return (
        f"Remedy: {step}, m being the mass the element moves, or a master that couples the element "
        f'implicitly through its interface.c/interface.d outputs (contactfmu: scheme="implicit"). '
        f"{why[0].upper()}{why[1:]}."
    )


def inertial_remedy(m):
    """Remedy hint of a body (Mass, MassWithStopAndFriction) whose motion came out non-finite
    from finite force inputs, for ``remedy()``."""
    return (
        f"Remedy: the force inputs are too large for the mass m = {m!r} kg over the step; they come from the "
        f"elements on its flanges: a stiff compliant element that outputs its law at the sampled inputs (a "
        f"contact element without the masses at its flanges) is unstable at a step large for its stiffness: "
        f"give that element the masses at its flanges or use a smaller communication step."
    )


def flange_terminal(table, flange, connector):
    """The terminal of flange `flange` (connector type `connector`: its terminalKind is
    TERMINAL_KINDS' for MSL's flanges, else the type; its description names the type) of a slave
    with the variable table `table`: members s, v, a (signal) and f (the flange's force:
    <flange>.f, not the numbered extra inputs), named as in MSL whatever the variables' names
    (SimulationX's .x and .F, conventions.port), so that flanges of either naming match. The force
    is the force acting on the compliant element at the flange (docs/conventions.md): the
    compliant element outputs it, the flow into it (inflow); the body takes it as input, the flow
    out of the body (outflow); a plain copy from the output to the input is the connection
    (fmi.terminals.flow_kind)."""
    variables = {v.name: v for v in table}
    members = []
    for what in FLANGE_MEMBERS:
        name = port(variables, flange, what)
        var = variables.get(name)
        if var is None:
            raise ValueError(f"flange {flange}: no variable {name}")
        kind = flow_kind(var.causality) if what == "f" else SIGNAL
        members.append(Member(name, what, kind))
    return Terminal(
        flange,
        TERMINAL_KINDS.get(connector, connector),
        members,
        f"Flange {flange} ({connector}): position, velocity, acceleration and the force acting on "
        f"the compliant element at it",
    )


class TranslationalSlave(Slave):
    """A slave with translational flanges: the rigid-body and compliant-element outputs, the
    forces summed at an inertial flange, and a terminal per flange (FLANGES: flange name ->
    the connector type of the documentation)."""

    FLANGES = {}

    @classmethod
    def terminals(cls):
        table = cls.variable_table()
        return tuple(
            flange_terminal(table, flange, connector) for flange, connector in cls.FLANGES.items()
        )

    def publish_motion(self):
        """Flange outputs of a rigid body from its s, v, a and length L (see flange_motion_outputs)."""
        self.flange_a_s, self.flange_b_s = self.s - 0.5 * self.L, self.s + 0.5 * self.L
        self.flange_a_v = self.flange_b_v = self.v
        self.flange_a_a = self.flange_b_a = self.a

    def cut_force(self, flange):
        """Sum of the force inputs of an inertial flange (``flange`` as attribute, e.g. flange_a)."""
        a, b, c, d = _FORCE_ATTRS[flange](self)
        return a + b + c + d

    def cut_force_rate(self, flange):
        """Sum of the first derivatives set for the force inputs of an inertial flange."""
        a, b, c, d = _FORCE_RATE_ATTRS[flange](self)
        return a + b + c + d

    def publish_force(self, f, rate):
        """Outputs of a two-flange compliant element (MSL PartialCompliant): f = flange_b.f =
        -flange_a.f, and their first time derivatives."""
        self.f, self.flange_b_f, self.flange_a_f = f, f, -f
        self.der_f, self.der_flange_b_f, self.der_flange_a_f = rate, rate, -rate


class CoupledContact(TranslationalSlave):
    """A two-flange contact element: its law at the inputs, or, given the inertias at its flanges
    (the parameters INERTIAS), the inertia-aware coupling (mechanics.coupler.Coupler) that runs
    the bodies' contact motion in the element and holds the force that keeps them on it. The
    protocol is written here once (initialization, outputs, step with its events and early
    return, remedy); a contact supplies its variable table, its law and these hooks:

    - relative_motion() -> (x, w, a): the law's coordinate, its rate and acceleration from the
      inputs (default: flange_b minus flange_a; origin(): the point of x the coupler's coordinate
      starts from, default 0);
    - sampled_outputs(x, w, a): without inertias, every output of the law at the inputs, the
      force published with its rate (publish_force);
    - coupled_outputs(held, s, v, x, w): with them, every output beside the held force, which
      it publishes ((s, v): the relative motion of the inputs; (x, w): the one the coupler
      planned from);
    - predict(x, w, g, state, times): the law's motion for the coupler; stiff(h): a step too long
      for the contact (the coupler plans deadbeat then); count_events: the law's number of events
      from a motion up to a time (None: the changes predict reports);
    - region(x, w): the law's state at a relative motion, whose changes are the plain law's events;
    - sampled_remedy(step_size): the hint when the law at the inputs came out non-finite;
    - coupler_options(): the Coupler's constructor keywords (state, starts_late, pushes_only);
    - after_step(): what the law keeps after a step (default nothing)."""

    INERTIAS = ("m_a", "m_b")
    count_events = None

    def coupler_options(self):
        return {}

    def origin(self):
        return 0.0

    def relative_motion(self):
        """s_rel = flange_b.s - flange_a.s, its rate and acceleration (MSL PartialCompliant)."""
        return (
            self.flange_b_s - self.flange_a_s,
            self.flange_b_v - self.flange_a_v,
            self.flange_b_a - self.flange_a_a,
        )

    def after_step(self):
        pass

    def inertia(self):
        """The reduced mass of the bodies at the flanges, None if no inertia is given."""
        first, second = self.INERTIAS
        return reduced_mass(getattr(self, first), getattr(self, second))

    def initialize(self, t0):
        mu = self.inertia()
        self._coupler = (
            Coupler(mu, self.default_experiment.step_size, **self.coupler_options()) if mu else None
        )
        # without the coupler step() reads the inputs alone: doStep computes no outputs before it
        # (the coupler is advanced by the outputs' computation; Slave.STEP_USES_OUTPUTS)
        self._step_uses_outputs = self._coupler is not None

    def compute_outputs(self):
        self.interface_integrates = bool(self.inertia())
        x, w, a = self.relative_motion()
        coupler = self._coupler
        if coupler is None:
            self.sampled_outputs(x, w, a)
            return
        # the bodies' motion now: the inputs, or one step old in a Jacobi master (Coupler.motion)
        s, v = x, w
        x, w = coupler.motion(x - self.origin(), w, self._fresh)
        self.coupled_outputs(coupler.force(x, w, self.predict, self.stiff), s, v, x, w)

    def step(self, t, h):
        x, w, a = self.relative_motion()
        coupler = self._coupler
        event = None
        if coupler is not None:
            x, w = coupler.motion(x - self.origin(), w, self._fresh)
            if self.report_events:
                event = self.coupled_event(coupler, t, h, self.count_events)
            self.commit_coupled(coupler, t, h, event, x, w)
        elif self.report_events:
            event = self.extrapolated_event(self.region, x, w, a, t, h)
        self.after_step()
        return event

    def remedy(self, step_size):
        return "" if self._coupler is not None else self.sampled_remedy(step_size)

    def coupled_event(self, coupler, t, h, count=None):
        """The time of the first event after t + event_resolution(t) in the step [t, t + h] of
        an element with the inertia-aware coupling (coupler.Coupler.first_event; count(x,
        w, g, state, t): the law's number of events from a motion up to a time, default the
        number of changes predict reports), None if none."""
        start = self.event_resolution(t)
        if not start < h:
            return None
        if count is None:

            def count(x, w, g, state, tau):
                return self.predict(x, w, g, state, (tau,))[2]

        offset = coupler.first_event(count, start, h)
        if offset is None:
            return None
        event = t + offset
        while event - t < offset:  # the step to the event reaches it (t + offset rounds down)
            event = math.nextafter(event, math.inf)
        return event

    def commit_coupled(self, coupler, t, h, event, x, w):
        """Commit the coupled step [t, t + h] from the bodies' motion (x, w), ended at `event` if
        the step stops there. The element plans each step with the last one's length (it learns a
        step's length only when it is taken); after an early return it plans with what an
        importer that allowed it takes next (fmpy, fmusim): the rest of the step asked for, then
        the step asked for before the early returns again."""
        if self.stops_at(t, h, event):
            coupler.resume_h = coupler.resume_h or h
            coupler.commit(event - t, self.predict, x, w, self._delivered, coupler.resume_h)
        else:
            resume, coupler.resume_h = coupler.resume_h, 0.0
            coupler.commit(h, self.predict, x, w, self._delivered, resume)

    def extrapolated_event(self, region, x, w, a, t, h):
        """The time of the first change of region(x, w), the element's law state at the relative
        motion (x, w), along the motion its inputs give over the step (position x, velocity w,
        acceleration a held), after t + event_resolution(t); None if none. Exact where the region
        changes once between the turning points of that motion (a contact by position)."""
        start = self.event_resolution(t)
        if not start < h:
            return None

        def at(tau):
            return region(x + tau * (w + 0.5 * tau * a), w + tau * a)

        before = at(start)
        turn = -w / a if a else -1.0
        ends = (turn, h) if start < turn < h else (h,)
        offset = first_change(lambda tau: at(tau) != before, start, ends)
        return None if offset is None else t + offset
