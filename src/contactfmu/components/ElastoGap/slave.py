"""ElastoGap FMU: MSL Translational.Components.ElastoGap, a compliant contact element."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import inp, out, parameter
from ...mechanics.coupler import reduced_mass, stiffness_number
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


class ElastoGap(CoupledContact):
    description = (
        "1D translational spring damper combination with gap "
        "(Modelica.Mechanics.Translational.Components.ElastoGap, MSL 4.1): motion in, contact force out, "
        "exact impacts at any step when given the masses m_a/m_b. Equations, co-simulation notes and "
        "variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=0.1, step_size=1e-4)
    HAS_EVENTS = True  # contact, release (FMI 3.0: early return, event mode)
    RECORDED_READ = (
        "f",
        ("f", "flange_a_f", "flange_b_f"),
    )  # the held force and the outputs that carry it

    FLANGES = {"flange_a": MSL_FLANGE_A, "flange_b": MSL_FLANGE_B}

    VARIABLES = [
        parameter("c", 1.0, "N/m", "Spring constant", min=0.0),
        parameter("d", 1.0, "N.s/m", "Damping constant", min=0.0),
        parameter("s_rel0", 0.0, "m", "Unstretched spring length (contact while s_rel < s_rel0)"),
        parameter(
            "n",
            1.0,
            "1",
            "Exponent of spring force (f_c = -c*|s_rel - s_rel0|^n; 1.5: Hertzian "
            "sphere/sphere contact)",
            min=1.0,
        ),
        parameter(
            "s_ref",
            1.0,
            "m",
            "Advanced (MSL 4.1): reference compression at which |f_c| = f_ref",
            min=0.0,
            min_exclusive=True,
        ),
        parameter(
            "f_ref",
            0.0,
            "N",
            "Advanced (MSL 4.1): spring force at the reference compression s_ref; "
            "0 (default) means c*s_ref, the MSL binding",
            min=0.0,
        ),
        parameter(
            "s_nominal",
            1e-4,
            "m",
            "Nominal value of s_rel (MSL: scaling for the solver; kept for compatibility: the FMU "
            "has no solver states to scale)",
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
            "m_a is 0 too); set m_a/m_b to integrate impacts inside the step (n = 1)",
            min=0.0,
        ),
        parameter(
            "useHeatPort",
            False,
            None,
            "= true, if heatPort is enabled (heatPort.Q_flow = -lossPower)",
        ),
        *motion_in_flange("flange_a", "ElastoGap"),
        *motion_in_flange("flange_b", "ElastoGap"),
        inp(
            "heatPort.T",
            293.15,
            "K",
            "Temperature of the heat port (input; the mechanics do not depend on it)",
        ),
        out(
            "flange_a.f",
            "N",
            "Force acting on the element at flange_a (MSL flange_a.f = -f >= 0)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "flange_b.f",
            "N",
            "Force acting on the element at flange_b (MSL flange_b.f = f <= 0)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "f",
            "N",
            "Forces between flanges (= flange_b.f = f_c + f_d; <= 0: pushes only; with m_a/m_b set: the "
            "coupling force held over the next step, <= 0 too)",
            depends=MOTION,
            derivative=True,
        ),
        out("s_rel", "m", "Relative distance (= flange_b.s - flange_a.s)", depends=POSITIONS),
        out("v_rel", "m/s", "Relative velocity (= der(s_rel))", depends=VELOCITIES),
        out("f_c", "N", "Spring force part of f (contact spring force)", depends=POSITIONS),
        out("f_d", "N", "Bounded damper force part of f (|f_d| <= |f_c|)", depends=MOTION),
        out(
            "lossPower",
            "W",
            "Loss power leaving the component as heat (= f_d*v_rel >= 0)",
            depends=MOTION,
        ),
        out("contact", None, "true if s_rel < s_rel0 (contact)", depends=POSITIONS, kind="Boolean"),
        out(
            "heatPort.Q_flow",
            "W",
            "Heat flow rate into the heat port (= -lossPower if useHeatPort, else 0)",
            depends=MOTION,
        ),
        *interface_outputs(MOTION),
        integrates_output(("m_a", "m_b")),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._coupler = None  # set when initialization ends if m_a or m_b is given

    def check(self):
        if reduced_mass(self.m_a, self.m_b) and self.n != 1.0:
            return [
                (
                    "n",
                    self.n,
                    "the inertia-aware coupling (m_a or m_b > 0) needs n = 1 (a piecewise "
                    "linear law it solves in closed form); set m_a = m_b = 0 for n != 1",
                )
            ]
        return []

    def coupler_options(self):
        return {"pushes_only": True}  # the law never pulls (f <= 0), nor does the held force

    def origin(self):
        return self.s_rel0  # the coupler's coordinate: x = s_rel - s_rel0 (law.predict)

    def _f_ref(self):
        return law.reference_force(self.c, self.s_ref, self.f_ref)

    def _law_at_inputs(self, s_rel, v_rel):
        """The law's outputs at the inputs; its force."""
        self.s_rel, self.v_rel = s_rel, v_rel
        f, self.f_c, self.f_d, self.contact = law.force(
            s_rel, v_rel, self.c, self.d, self.s_rel0, self.n, self.s_ref, self._f_ref()
        )
        self.lossPower = self.f_d * v_rel
        self.heatPort_Q_flow = -self.lossPower if self.useHeatPort else 0.0
        return f

    def sampled_outputs(self, s_rel, v_rel, a_rel):
        f = self._law_at_inputs(s_rel, v_rel)
        args = (self.c, self.d, self.s_rel0, self.n, self.s_ref, self._f_ref())
        rate = law.force_rate(s_rel, v_rel, a_rel, *args)
        self.interface_c, self.interface_d = law.interface(s_rel, v_rel, *args)
        self.publish_force(f, rate)

    def coupled_outputs(self, held, s_rel, v_rel, x, w):
        self._law_at_inputs(s_rel, v_rel)
        self.interface_c = self.interface_d = 0.0  # the held force is the element's own
        self.publish_force(held, 0.0)

    def stiff(self, h):
        return stiffness_number(self._coupler.mu, h, 2.0 * self._f_ref() / self.s_ref, self.d) > 1.0

    def predict(self, x, w, g, _, times):
        """The law's motion of x = s_rel - s_rel0 (n = 1) for the coupler."""
        return law.predict(x, w, self._coupler.mu, g, times, self._f_ref() / self.s_ref, self.d)

    def region(self, s_rel, v_rel):
        return s_rel < self.s_rel0  # in contact

    def sampled_remedy(self, step_size):
        inertia = ("m_a/m_b", "the masses at the flanges; n = 1") if self.n == 1.0 else None
        return sampled_law_remedy(self._f_ref() / self.s_ref, self.d, step_size, inertia)
