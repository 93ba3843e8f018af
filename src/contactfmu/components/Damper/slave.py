"""Damper FMU: MSL Translational.Components.Damper, a compliant element (motion in, force out)."""

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


class Damper(TranslationalSlave):
    description = (
        "Linear 1D translational damper (Modelica.Mechanics.Translational.Components.Damper): motion in, f = "
        "d*v_rel out. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    FLANGES = {"flange_a": MSL_FLANGE_A, "flange_b": MSL_FLANGE_B}

    VARIABLES = [
        parameter("d", 0.0, "N.s/m", "Damping constant", min=0.0),
        *motion_in_flange("flange_a", "damper"),
        *motion_in_flange("flange_b", "damper"),
        out(
            "flange_a.f",
            "N",
            "Force acting on the damper at flange_a (MSL flange_a.f = -f)",
            depends=VELOCITIES,
            derivative=True,
        ),
        out(
            "flange_b.f",
            "N",
            "Force acting on the damper at flange_b (MSL flange_b.f = f)",
            depends=VELOCITIES,
            derivative=True,
        ),
        out("f", "N", "Force between flanges (= flange_b.f)", depends=VELOCITIES, derivative=True),
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
            "Loss power leaving the component as heat (= f*v_rel >= 0)",
            depends=VELOCITIES,
        ),
        *interface_outputs(()),
    ]

    def compute_outputs(self):
        self.interface_c, self.interface_d = 0.0, self.d
        self.s_rel, self.v_rel = linear.relative_motion(
            self.flange_a_s, self.flange_a_v, self.flange_b_s, self.flange_b_v
        )
        self.publish_force(
            linear.damper_force(self.v_rel, self.d),
            linear.force_rate(self.v_rel, self.flange_b_a - self.flange_a_a, 0.0, self.d),
        )
        self.lossPower = self.f * self.v_rel

    def remedy(self, step_size):
        return sampled_law_remedy(0.0, self.d, step_size)
