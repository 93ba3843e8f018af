"""TranslationalHardstop FMU: MapleSim Translational Hardstop, a compliant double-sided stop."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import out, parameter
from ...mechanics.coupler import stiffness_number
from ..translational import (
    MSL_FLANGE_A,
    MSL_FLANGE_B,
    CoupledContact,
    integrates_output,
    interface_outputs,
    motion_in_flange,
    sampled_law_remedy,
)
from . import law

MOTION = ("flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v")
POSITIONS = ("flange_a.s", "flange_b.s")
VELOCITIES = ("flange_a.v", "flange_b.v")


class TranslationalHardstop(CoupledContact):
    description = (
        "Double-sided translational hard stop (MapleSim Translational Hardstop): motion in, stop force out, "
        "exact stiff impacts at any step when given the masses m_a/m_b. Equations, co-simulation notes and "
        "variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)
    RECORDED_READ = (
        "flange_b_f",
        ("flange_a_f", "flange_b_f", "F"),
    )  # the held force and the outputs that carry it

    HAS_EVENTS = True  # hits and releases of the stops (FMI 3.0: early return, event mode)
    FLANGES = {
        "flange_a": MSL_FLANGE_A,
        "flange_b": MSL_FLANGE_B,
    }  # MapleSim documents MSL flanges (flange_a solid, flange_b hollow)

    VARIABLES = [
        parameter(
            "b",
            1.0,
            "m",
            "Distance between stops (gap width; b <= 2e-10: plain spring-damper)",
            min=0.0,
        ),
        parameter("c", 1e10, "N/m", "Spring constant", min=0.0),
        parameter("d", 1e10, "N.s/m", "Damping constant (damper force not bounded)", min=0.0),
        parameter(
            "s_nominal",
            1e-4,
            "m",
            "Nominal value of s_rel (MapleSim: scaling for the solver; kept for "
            "compatibility, a co-simulation unit has no states to scale)",
            min=0.0,
        ),
        parameter(
            "m_a",
            0.0,
            "kg",
            "Co-simulation: inertia attached at flange_a (0: fixed, or not known when "
            "m_b is 0 too); with m_a = m_b = 0 the force is the law at the inputs",
            min=0.0,
        ),
        parameter(
            "m_b",
            0.0,
            "kg",
            "Co-simulation: inertia attached at flange_b (0: fixed, or not known when "
            "m_a is 0 too); set it to integrate stiff contacts inside the step",
            min=0.0,
        ),
        *motion_in_flange("flange_a", "TranslationalHardstop"),
        *motion_in_flange("flange_b", "TranslationalHardstop"),
        out(
            "flange_a.f",
            "N",
            "Force acting on the element at flange_a (= -F)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "flange_b.f",
            "N",
            "Force acting on the element at flange_b (= F)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "F",
            "N",
            "Force at flange_b (MapleSim F = F_b = -F_a; > 0 pushes flange_b towards -s): the law at "
            "the inputs, or with m_a/m_b set the force held over the next step",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "s_rel", "m", "Distance between flanges (= flange_b.s - flange_a.s)", depends=POSITIONS
        ),
        out("v_rel", "m/s", "Relative velocity (= der(s_rel))", depends=VELOCITIES),
        out(
            "contact",
            None,
            "Contact indicator: 1 at the upper stop (s_rel > b/2), -1 at the lower stop "
            "(s_rel < -b/2), 0 in the gap; for b <= 2e-10 the sign of s_rel",
            depends=POSITIONS,
            kind="Integer",
        ),
        *interface_outputs(POSITIONS),
        integrates_output(("m_a", "m_b")),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.initialize(0.0)

    def _law_at_inputs(self, s_rel, v_rel):
        """The law's outputs at the inputs; its force."""
        self.s_rel, self.v_rel = s_rel, v_rel
        f, self.contact = law.force(s_rel, v_rel, self.b, self.c, self.d)
        return f

    def sampled_outputs(self, s_rel, v_rel, a_rel):
        f = self._law_at_inputs(s_rel, v_rel)
        rate = law.force_rate(s_rel, v_rel, a_rel, self.b, self.c, self.d)
        self.interface_c, self.interface_d = law.interface(s_rel, self.b, self.c, self.d)
        self._publish(f, rate)

    def coupled_outputs(self, held, s_rel, v_rel, x, w):
        self._law_at_inputs(s_rel, v_rel)
        self.interface_c = self.interface_d = 0.0  # the held force is the element's own
        self._publish(held, 0.0)

    def _publish(self, force, rate):
        self.publish_force(force, rate)
        self.F, self.der_F = self.f, self.der_f

    def stiff(self, h):
        return stiffness_number(self._coupler.mu, h, self.c, self.d) > 1.0

    def predict(self, x, w, g, _, times):
        """The law's motion of s_rel for the coupler."""
        return law.predict(x, w, self._coupler.mu, g, times, self.b, self.c, self.d)

    def region(self, s_rel, v_rel):
        return law.force(s_rel, v_rel, self.b, self.c, self.d)[1]  # the contact indicator

    def sampled_remedy(self, step_size):
        return sampled_law_remedy(
            self.c, self.d, step_size, ("m_a/m_b", "the masses at the flanges")
        )
