"""Mass FMU: MSL Translational.Components.Mass, an inertial element (forces in, motion out)."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import out, parameter
from ...mechanics import rigid
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


class Mass(TranslationalSlave):
    description = (
        "Sliding mass with inertia (Modelica.Mechanics.Translational.Components.Mass): forces in, motion out, "
        "m*a = -flange_a.f - flange_b.f. Equations, co-simulation notes and variables: "
        "documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)
    FORCES = force_inputs("flange_a") + force_inputs("flange_b")
    INPUT_DERIVATIVES = True
    STEP_USES_OUTPUTS = False

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
        ),
        parameter(
            "s_start", 0.0, "m", "Initial absolute position of the centre (MSL s(start = s_start))"
        ),
        parameter("v_start", 0.0, "m/s", "Initial absolute velocity (MSL v(start = v_start))"),
        *force_in_flange("flange_a"),
        *force_in_flange("flange_b"),
        out(
            "s",
            "m",
            "Absolute position of the centre of the component (= s_start at the start time)",
        ),
        out(
            "v", "m/s", "Absolute velocity of the component (= der(s); = v_start at the start time)"
        ),
        out(
            "a",
            "m/s2",
            "Absolute acceleration (= der(v)) = (-flange_a.f - flange_b.f)/m",
            depends=FORCES,
        ),
        *flange_motion_outputs(FORCES),
        inertia_output(),
    ]

    def initialize(self, t0):
        self.s, self.v = self.s_start, self.v_start

    def compute_outputs(self):
        if not self._initialized:
            self.s, self.v = self.s_start, self.v_start
        self.a = rigid.acceleration(
            self.m, -self.cut_force("flange_a") - self.cut_force("flange_b")
        )
        self.interface_m = self.m
        self.publish_motion()

    def step(self, t, h):
        a = rigid.acceleration(self.m, -self.cut_force("flange_a") - self.cut_force("flange_b"))
        jerk = (-self.cut_force_rate("flange_a") - self.cut_force_rate("flange_b")) / self.m
        self.s, self.v = rigid.advance(self.s, self.v, a, h, jerk)

    def remedy(self, step_size):
        return inertial_remedy(self.m)
