"""EndStop FMU: SimulationX Mechanics.Translation.EndStop, rigid or elastic end stop with friction."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import inp, out, parameter
from ..translational import CoupledContact, integrates_output, sampled_law_remedy
from . import law, prediction

# the documented connector type of ctr1 and ctr2: "Mechanical Connector (linear) connectable to
# elements of the Linear Mechanics library", a SimulationX type: a tool-specific terminalKind starts
# with the tool's name (FMI 3.0)
CONNECTOR = "_SimulationX_Mechanical Connector (linear)"
MOTION = ("ctr1.x", "ctr1.v", "ctr2.x", "ctr2.v")
# advanced settings used while adv = false (SimulationX: "previous releases used internal defaults")
ADVANCED = {
    "eps_Fi": 1e-6,
    "eps_dv": 1e-4,
    "dFfrel": 1e-3,
    "eps_dvsl": 1e-6,
    "eps_dI": 1e-8,
    "kindTrans": 1,
    "eps_sigma": 1.0,
    "eps_tau": 0.1,
}


def connector(name):
    return [
        inp(f"{name}.x", 0.0, "m", f"Displacement of {name} (input: motion of the connected body)"),
        inp(f"{name}.v", 0.0, "m/s", f"Velocity of {name} (input)"),
        inp(f"{name}.a", 0.0, "m/s2", f"Acceleration of {name} (input; 0 = no information)"),
    ]


class EndStop(CoupledContact):
    description = (
        "Linear mechanical end stop, rigid or elastic, with friction in the backlash (SimulationX "
        "Mechanics.Translation.EndStop): motion in, forces out, exact impacts and stick-slip when given the "
        "masses m1/m2. Equations, co-simulation notes and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)
    HAS_EVENTS = True  # contact, release, impacts, stick/slip (FMI 3.0: early return, event mode)
    RECORDED_READ = ("ctr1_F", ("ctr1_F", "ctr2_F"))  # the held force and the outputs that carry it

    FLANGES = {"ctr1": CONNECTOR, "ctr2": CONNECTOR}

    VARIABLES = [
        parameter("l1", 0.01, "m", "End stop distance 1: end stop 1 in contact for dx >= l1"),
        parameter("l2", 0.01, "m", "End stop distance 2: end stop 2 in contact for dx <= -l2"),
        parameter("mode", 2, None, "Model: 1 = Rigid End Stop, 2 = Elastic End Stop", min=1, max=2),
        parameter(
            "kind",
            3,
            None,
            "Kind of impact (rigid only): 1 = plastic (ci = 0), 2 = elastic (ci = 1), "
            "3 = by coefficient ci",
            min=1,
            max=3,
        ),
        parameter(
            "ci",
            0.8,
            "1",
            "Coefficient of restitution (0 <= ci <= 1), for kind = 3",
            min=0.0,
            max=1.0,
        ),
        parameter("k1", 1e6, "N/m", "Stiffness stop 1 (elastic)", min=0.0),
        parameter("k2", 1e6, "N/m", "Stiffness stop 2 (elastic)", min=0.0),
        parameter("b1", 100.0, "N.s/m", "Damping stop 1 (elastic)", min=0.0),
        parameter("b2", 100.0, "N.s/m", "Damping stop 2 (elastic)", min=0.0),
        parameter("friction", False, None, "Consideration of friction in the backlash"),
        parameter(
            "kindF",
            1,
            None,
            "Rigid friction with: 1 = continuous transition, 2 = stick-slip",
            min=1,
            max=2,
        ),
        parameter("Fst", 10.0, "N", "Force of static friction", min=0.0),
        parameter("Fsl", 8.0, "N", "Force of sliding friction (continuous transition)", min=0.0),
        parameter(
            "dvL",
            1e-3,
            "m/s",
            "Limit velocity difference (continuous transition)",
            min=0.0,
            min_exclusive=True,
        ),
        parameter(
            "adv", False, None, "Advanced settings: false uses the defaults of eps_Fi ... eps_tau"
        ),
        parameter("eps_Fi", 1e-6, "N", "Minimum separation force (rigid)", min=0.0),
        parameter(
            "eps_dv",
            1e-4,
            "m/s",
            "Maximum velocity difference after impact for permanent contact (rigid)",
            min=0.0,
        ),
        parameter(
            "dFfrel",
            1e-3,
            "1",
            "Relative minimum difference of the friction forces (stick-slip; "
            "accepted, no role in this model)",
            min=0.0,
        ),
        parameter(
            "eps_dvsl",
            1e-6,
            "m/s",
            "Minimum separation velocity difference (stick-slip; accepted, no "
            "role in this model: sticking is located exactly)",
            min=0.0,
        ),
        parameter(
            "eps_dI",
            1e-8,
            "N.s",
            "Minimum separation momentum (accepted; in a co-simulation an impulse "
            "from elsewhere arrives as a mean force over a step, judged by eps_Fi)",
            min=0.0,
        ),
        parameter(
            "kindTrans",
            1,
            None,
            "Transition shape of the sliding friction force: 1 = Gevrey approach "
            "(based on tanh), 2 = tanh approach",
            min=1,
            max=2,
        ),
        parameter(
            "eps_sigma",
            1.0,
            "1",
            "Shape coefficient of the Gevrey transition",
            min=0.0,
            min_exclusive=True,
        ),
        parameter(
            "eps_tau",
            0.1,
            "1",
            "Shape coefficient of the tanh transition",
            min=0.0,
            min_exclusive=True,
        ),
        parameter("m1", 0.0, "kg", "Co-simulation: mass attached at ctr1 (0: fixed side)", min=0.0),
        parameter("m2", 0.0, "kg", "Co-simulation: mass attached at ctr2 (0: fixed side)", min=0.0),
        *connector("ctr1"),
        *connector("ctr2"),
        out(
            "ctr1.F",
            "N",
            "Force acting on the element at ctr1 (= the force held over the step; Fi without "
            "impacts); ctr1's body receives -ctr1.F",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "ctr2.F",
            "N",
            "Force acting on the element at ctr2 (= -ctr1.F)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "Fi",
            "N",
            "Internal force (= Fstop + Ff; > 0 at stop 1, < 0 at stop 2; impacts excluded)",
            depends=MOTION,
        ),
        out("Fstop", "N", "End stop force (elastic: Fs + Fd)", depends=MOTION),
        out("Fs", "N", "Spring force in end stop (elastic)", depends=MOTION),
        out("Fd", "N", "Damping force in end stop (elastic)", depends=MOTION),
        out("Ff", "N", "Friction force", depends=MOTION),
        out(
            "dx",
            "m",
            "Displacement difference (= ctr1.x - ctr2.x; with m1/m2 of the element's own motion, "
            "which the bodies follow)",
            depends=MOTION,
        ),
        out(
            "dv",
            "m/s",
            "Velocity difference (= ctr1.v - ctr2.v; with m1/m2 of the element's own motion, "
            "which the bodies follow)",
            depends=MOTION,
        ),
        out(
            "stop",
            None,
            "Stop state: 0 free, 1 at end stop 1, 2 at end stop 2, 11 detaching from 1, 21 "
            "detaching from 2, 3 both sides at stop",
            depends=MOTION,
            kind="Integer",
        ),
        out(
            "sf",
            None,
            "State of friction: 0 stuck, 1 sliding with dv > 0, -1 sliding with dv < 0",
            depends=MOTION,
            kind="Integer",
        ),
        out("Pl", "W", "Power loss of the friction (= Ff*dv)", depends=MOTION),
        out(
            "impulse",
            "N.s",
            "Impulse of the rigid impacts located in the last communication step (sign of Fi)",
        ),
        integrates_output(("m1", "m2")),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.initialize(0.0)

    def check(self):
        bad = []
        needs = []
        if self.mode == law.RIGID:
            needs.append("a Rigid End Stop")
        if self.friction and self.kindF == law.STICK_SLIP:
            needs.append("stick-slip friction")
        if needs and not (self.m1 > 0.0 or self.m2 > 0.0):
            bad.append(
                (
                    "m1",
                    self.m1,
                    f"{' and '.join(needs)} needs the attached masses: m1 > 0 or m2 > 0 "
                    f"(0 = fixed side)",
                )
            )
        return bad

    def build_parameters(self):
        adv = {name: getattr(self, name) for name in ADVANCED} if self.adv else dict(ADVANCED)
        return law.Parameters(
            l1=self.l1,
            l2=self.l2,
            mode=self.mode,
            kind=self.kind,
            ci=self.ci,
            k1=self.k1,
            k2=self.k2,
            b1=self.b1,
            b2=self.b2,
            friction=self.friction,
            kindF=self.kindF,
            Fst=self.Fst,
            Fsl=self.Fsl,
            dvL=self.dvL,
            **adv,
        )

    INERTIAS = ("m1", "m2")

    def coupler_options(self):
        # the stop and friction states outlive the shadow; a contact starts by the stop state alone
        return {"state": (law.FREE, 0), "starts_late": False}

    def initialize(self, t0):
        super().initialize(t0)
        # the stop state of the sampled law (no inertia given), updated by the outputs'
        # computation: doStep brings the outputs up to date before the step in both cases
        self._stop = self._pending_stop = law.FREE
        self._step_uses_outputs = True

    def relative_motion(self):
        return self.ctr1_x - self.ctr2_x, self.ctr1_v - self.ctr2_v, self.ctr1_a - self.ctr2_a

    def sampled_outputs(self, dx, dv, da):
        """No inertia given (elastic only): the law at the inputs, states updated at the points."""
        p = self.parameters()
        self.dx, self.dv = dx, dv
        self.impulse = 0.0
        self._pending_stop = law.elastic_transition(self._stop, dx, dv, p)
        self._results(p, (self._pending_stop, 0), dx, dv, 0.0)
        self._publish(self.Fi, law.force_rate(self._pending_stop, dx, dv, da, p))

    def coupled_outputs(self, held, dx, dv, x, w):
        coupler = self._coupler
        self.impulse = coupler.moved.detail.impulse if coupler.moved is not None else 0.0
        if coupler.pending is not None:
            x, w = coupler.pending.x, coupler.pending.w
        # the outputs are those of the element's own motion (x, w), dx and dv included, which the
        # bodies follow: its state, Ff and Pl = Ff*dv belong to that motion (paired with the inputs'
        # dv, which lag it by up to the steps an impact is spread over, the friction of a motion that
        # already rebounded or stuck appeared to drive the bodies: Pl < 0)
        self.dx, self.dv = x, w
        self._results(self.parameters(), coupler.pending_state, x, w, coupler.mu * coupler.g_now)
        self._publish(held, 0.0)

    def stiff(self, h):
        return prediction.stiff(self._coupler.mu, h, self.parameters())

    def predict(self, x, w, g, state, times):
        """The law's motion of (dx, dv) for the coupler."""
        return prediction.motion(x, w, g, state, times, self._coupler.mu, self.parameters())

    def count_events(self, x, w, g, state, t):
        """The documented state changes and impacts from (dx, dv) = (x, w) up to t."""
        p = self.parameters()
        return prediction.predict(x, w, state[0], state[1], self._coupler.mu, g, (t,), p).events

    def region(self, dx, dv):
        return law.elastic_transition(self._pending_stop, dx, dv, self.parameters())

    def after_step(self):
        self._stop = self._pending_stop

    def _results(self, p, state, x, w, need):
        """Documented results for the element's motion (x, w) in state (stop, sf); need = mu*g."""
        self.stop, self.sf, self.Fs, self.Fd, self.Ff, self.Fstop, self.Fi = law.results(
            *state, x, w, need, p
        )
        # documented Pl = Ff*dv, with the motion the outputs describe (dv = w)
        self.Pl = self.Ff * w

    def _publish(self, force, rate):
        self.ctr1_F, self.ctr2_F = force, -force
        self.der_ctr1_F, self.der_ctr2_F = rate, -rate

    def sampled_remedy(self, step_size):
        return sampled_law_remedy(
            max(self.k1, self.k2),
            max(self.b1, self.b2),
            step_size,
            ("m1/m2", "the masses at ctr1/ctr2"),
        )
