"""MassWithStopAndFriction FMU: MSL Translational.Components.MassWithStopAndFriction."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import out, parameter
from ..translational import (
    MSL_FLANGE_A,
    MSL_FLANGE_B,
    TranslationalSlave,
    flange_motion_outputs,
    force_in_flange,
    force_inputs,
    inertia_output,
    inertial_remedy,
)
from . import law as mwsf

FORCES = force_inputs("flange_a") + force_inputs("flange_b")


class MassWithStopAndFriction(TranslationalSlave):
    description = (
        "Sliding mass with hard stops and Stribeck friction "
        "(Modelica.Mechanics.Translational.Components.MassWithStopAndFriction, MSL 4.1): forces in, motion "
        "out, stick/slip and stop impacts located inside the step. Equations, co-simulation notes and "
        "variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=5.0, step_size=1e-3)
    INPUT_DERIVATIVES = True
    STEP_USES_OUTPUTS = False

    HAS_EVENTS = True  # stop impacts, stick, breakaway (FMI 3.0: early return, event mode)
    FLANGES = {"flange_a": MSL_FLANGE_A, "flange_b": MSL_FLANGE_B}

    VARIABLES = [
        parameter(
            "m", 1.0, "kg", "Mass of the sliding mass (must be > 0)", min=0.0, min_exclusive=True
        ),
        parameter(
            "L",
            0.0,
            "m",
            "Length of component, from left flange to right flange (= flange_b.s - flange_a.s)",
            min=0.0,
        ),
        parameter("smax", 25.0, "m", "Right stop for (right end of) sliding mass"),
        parameter("smin", -25.0, "m", "Left stop for (left end of) sliding mass"),
        parameter("F_prop", 1.0, "N.s/m", "Velocity dependent friction", min=0.0),
        parameter("F_Coulomb", 5.0, "N", "Constant friction: Coulomb force", min=0.0),
        parameter("F_Stribeck", 10.0, "N", "Stribeck effect", min=0.0),
        parameter("fexp", 2.0, "s/m", "Exponential decay", min=0.0),
        parameter(
            "v_small", 1e-3, "m/s", "Relative velocity near to zero (see model info text)", min=0.0
        ),
        parameter(
            "useHeatPort",
            False,
            None,
            "= true, if heatPort is enabled (heatPort.Q_flow = -lossPower)",
        ),
        parameter(
            "s_start",
            0.0,
            "m",
            "Initial absolute position of the centre (MSL s(start = s_start); "
            "must lie within [smin, smax])",
        ),
        parameter("v_start", 0.0, "m/s", "Initial absolute velocity (MSL v(start = v_start))"),
        *force_in_flange("flange_a"),
        *force_in_flange("flange_b"),
        out("s", "m", "Absolute position of center of component (= s_start at the start time)"),
        out("v", "m/s", "Absolute velocity of component (= v_start at the start time)"),
        out("a", "m/s2", "Absolute acceleration of component", depends=FORCES),
        *flange_motion_outputs(FORCES),
        out(
            "f",
            "N",
            "Friction force (positive opposes forward motion; = sa while stuck)",
            depends=FORCES,
        ),
        out("f0", "N", "Friction force for v = 0 and forward sliding (= F_Coulomb + F_Stribeck)"),
        out("f0_max", "N", "Maximum friction force for v = 0 and locked (= 1.001*f0, MSL code)"),
        out(
            "sa",
            "1",
            "Path parameter of friction characteristic f = f(a = 0) (= f while stuck [N])",
            depends=FORCES,
        ),
        out(
            "mode",
            None,
            "Mode of friction: -1 Backward, 0 Stuck, 1 Forward, 2 Free, 3 Unknown",
            depends=FORCES,
            kind="Integer",
        ),
        out(
            "startForward",
            None,
            "true while sliding starts forward (v = 0, breakaway)",
            depends=FORCES,
            kind="Boolean",
        ),
        out(
            "startBackward",
            None,
            "true while sliding starts backward (v = 0, breakaway)",
            depends=FORCES,
            kind="Boolean",
        ),
        out(
            "locked",
            None,
            "true if stuck (a = 0, friction holds the mass)",
            depends=FORCES,
            kind="Boolean",
        ),
        out(
            "free",
            None,
            "true if the friction is inactive (f0 <= 0 and F_prop <= 0, between the stops)",
            kind="Boolean",
        ),
        out(
            "stopped",
            None,
            "-1 at the left stop, 0 between the stops, +1 at the right stop",
            kind="Integer",
        ),
        out(
            "lossPower",
            "W",
            "Loss power leaving the component as heat (= f*v; stop impacts excluded)",
            depends=FORCES,
        ),
        out(
            "heatPort.Q_flow",
            "W",
            "Heat flow rate into the heat port (= -lossPower if useHeatPort, else 0)",
            depends=FORCES,
        ),
        out(
            "lastEventTime",
            "s",
            "Time of the last event located inside the steps (stick, slip, stop "
            "impact; -1 before the first)",
        ),
        inertia_output(),
    ]

    def check(self):
        bad = []
        if not self.smin < self.smax:
            bad.append(("smin", self.smin, f"must be < smax = {self.smax!r} m"))
        elif self.smax - self.smin < self.L:
            bad.append(
                (
                    "L",
                    self.L,
                    f"the mass must fit between the stops: L <= smax - smin = "
                    f"{self.smax - self.smin!r} m",
                )
            )
        return bad

    def build_parameters(self):
        return mwsf.Parameters(
            self.m,
            self.L,
            self.smax,
            self.smin,
            self.F_prop,
            self.F_Coulomb,
            self.F_Stribeck,
            self.fexp,
            self.v_small,
        )

    def initialize(self, t0):
        self.s, self.v = self.s_start, self.v_start
        p = self._p
        message = mwsf.start_checks(p, self.s, self.v)
        if message:
            self._error(message)
            return
        self.internal_mode = mwsf.Body(p, self.s, self.v).initialize(
            -self.cut_force("flange_a") - self.cut_force("flange_b")
        )
        self.event_log = []
        self.h_int = None
        self.lastEventTime = -1.0

    def compute_outputs(self):
        if not self._initialized:
            self.s, self.v = self.s_start, self.v_start
        p = self.parameters()
        F = -self.cut_force("flange_a") - self.cut_force("flange_b")
        mode, self.startForward, self.startBackward = mwsf.settle(
            p, self.s, self.v, getattr(self, "internal_mode", mwsf.UNKNOWN), F
        )
        self.a, self.f, self.sa = mwsf.outputs(p, self.s, self.v, mode, F)
        self.mode = mode
        self.locked = mode == mwsf.STUCK
        self.free = mode == mwsf.FREE
        self.f0, self.f0_max = p.f0, p.f0_max
        self.stopped = mwsf.stopped_flag(p, self.s)
        self.lossPower = self.f * self.v
        self.heatPort_Q_flow = -self.lossPower if self.useHeatPort else 0.0
        self.interface_m = self.m
        self.publish_motion()

    def step(self, t, h):
        body = mwsf.Body(
            self.parameters(), self.s, self.v, self.internal_mode, self.event_log, self.h_int
        )
        after = t + self.event_resolution(t) if self.report_events else None
        try:
            body.step(
                t,
                h,
                -self.cut_force("flange_a") - self.cut_force("flange_b"),
                -self.cut_force_rate("flange_a") - self.cut_force_rate("flange_b"),
                events_after=after,
                stop_at_event=self.stop_at_events,
            )
        except mwsf.StepBudgetExceeded as exc:  # the state stays at the start of the step
            self._error(
                f"MassWithStopAndFriction: {exc} (the friction law is too stiff for the integrator: "
                f"F_prop/m = {self.F_prop / self.m:.3g} 1/s)"
            )
            return
        self.s, self.v, self.internal_mode, self.h_int = body.s, body.v, body.mode, body.h_int
        if self.event_log:
            self.lastEventTime = self.event_log[-1][0]
        return body.first_event

    def remedy(self, step_size):
        return inertial_remedy(self.m)
