"""Spring FMU: MSL Translational.Components.Spring, a compliant element (motion in, force out)."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import out, parameter
from ...mechanics import linear
from ..translational import (
    MSL_FLANGE_A,
    MSL_FLANGE_B,
    TranslationalSlave,
    interface_outputs,
    motion_in_flange,
    sampled_law_remedy,
)

POSITIONS = ("flange_a.s", "flange_b.s")


class Spring(TranslationalSlave):
    description = (
        "Linear 1D translational spring (Modelica.Mechanics.Translational.Components.Spring): motion in, f = "
        "c*(s_rel - s_rel0) out. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    FLANGES = {"flange_a": MSL_FLANGE_A, "flange_b": MSL_FLANGE_B}

    VARIABLES = [
        parameter("c", 1.0, "N/m", "Spring constant", min=0.0),
        parameter("s_rel0", 0.0, "m", "Unstretched spring length"),
        *motion_in_flange("flange_a", "spring"),
        *motion_in_flange("flange_b", "spring"),
        out(
            "flange_a.f",
            "N",
            "Force acting on the spring at flange_a (MSL flange_a.f = -f)",
            depends=POSITIONS,
            derivative=True,
        ),
        out(
            "flange_b.f",
            "N",
            "Force acting on the spring at flange_b (MSL flange_b.f = f)",
            depends=POSITIONS,
            derivative=True,
        ),
        out(
            "f",
            "N",
            "Force between flanges (positive = tension, = flange_b.f)",
            depends=POSITIONS,
            derivative=True,
        ),
        out("s_rel", "m", "Relative distance (= flange_b.s - flange_a.s)", depends=POSITIONS),
        *interface_outputs(()),
    ]

    def compute_outputs(self):
        self.interface_c, self.interface_d = self.c, 0.0
        self.s_rel = self.flange_b_s - self.flange_a_s
        self.publish_force(
            linear.spring_force(self.s_rel, self.c, self.s_rel0),
            linear.force_rate(self.flange_b_v - self.flange_a_v, 0.0, self.c, 0.0),
        )

    def remedy(self, step_size):
        return sampled_law_remedy(self.c, 0.0, step_size)
