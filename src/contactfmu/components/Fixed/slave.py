"""Fixed FMU: MSL Translational.Components.Fixed, a flange fixed in the housing."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import out, parameter
from ..translational import MSL_FLANGE_B, TranslationalSlave, force_in_flange, force_inputs


class Fixed(TranslationalSlave):
    description = (
        "Fixed flange (Modelica.Mechanics.Translational.Components.Fixed): flange.s = s0, force in, f_support "
        "out. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    FLANGES = {"flange": MSL_FLANGE_B}  # MSL Fixed: Interfaces.Flange_b flange

    VARIABLES = [
        parameter("s0", 0.0, "m", "Fixed offset position of housing"),
        *force_in_flange("flange"),
        out("flange.s", "m", "Position of the flange (= s0)"),
        out("flange.v", "m/s", "Velocity of the flange (= 0)"),
        out("flange.a", "m/s2", "Acceleration of the flange (= 0)"),
        out(
            "f_support",
            "N",
            "Force the connected elements exert on the housing (= -(flange.f + flange.f2 + "
            "flange.f3 + flange.f4), the support reaction)",
            depends=force_inputs("flange"),
        ),
    ]

    def compute_outputs(self):
        self.flange_s = self.s0
        self.flange_v = 0.0
        self.flange_a = 0.0
        self.f_support = -self.cut_force("flange")
