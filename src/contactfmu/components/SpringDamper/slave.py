"""SpringDamper FMU: MSL Translational.Components.SpringDamper (motion in, force out)."""

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

MOTION = ("flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v")
VELOCITIES = ("flange_a.v", "flange_b.v")


class SpringDamper(TranslationalSlave):
    description = (
        "Linear 1D translational spring and damper in parallel "
        "(Modelica.Mechanics.Translational.Components.SpringDamper): motion in, f = c*(s_rel - s_rel0) + "
        "d*v_rel out. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    FLANGES = {"flange_a": MSL_FLANGE_A, "flange_b": MSL_FLANGE_B}

    VARIABLES = [
        parameter("c", 1.0, "N/m", "Spring constant", min=0.0),
        parameter("d", 1.0, "N.s/m", "Damping constant", min=0.0),
        parameter("s_rel0", 0.0, "m", "Unstretched spring length"),
        *motion_in_flange("flange_a", "spring-damper"),
        *motion_in_flange("flange_b", "spring-damper"),
        out(
            "flange_a.f",
            "N",
            "Force acting on the element at flange_a (MSL flange_a.f = -f)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "flange_b.f",
            "N",
            "Force acting on the element at flange_b (MSL flange_b.f = f)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "f",
            "N",
            "Force between flanges (positive = tension, = flange_b.f)",
            depends=MOTION,
            derivative=True,
        ),
        out(
            "s_rel",
            "m",
            "Relative distance (= flange_b.s - flange_a.s)",
            depends=("flange_a.s", "flange_b.s"),
        ),
        out("v_rel", "m/s", "Relative velocity (= flange_b.v - flange_a.v)", depends=VELOCITIES),
        out(
            "lossPower",
            "W",
            "Loss power leaving the component as heat (= d*v_rel^2)",
            depends=VELOCITIES,
        ),
        *interface_outputs(()),
    ]

    def compute_outputs(self):
        self.interface_c, self.interface_d = self.c, self.d
        self.s_rel, self.v_rel = linear.relative_motion(
            self.flange_a_s, self.flange_a_v, self.flange_b_s, self.flange_b_v
        )
        self.publish_force(
            linear.spring_damper_force(self.s_rel, self.v_rel, self.c, self.d, self.s_rel0),
            linear.force_rate(self.v_rel, self.flange_b_a - self.flange_a_a, self.c, self.d),
        )
        self.lossPower = self.d * self.v_rel * self.v_rel

    def remedy(self, step_size):
        return sampled_law_remedy(self.c, self.d, step_size)
