"""Force FMU: MSL Translational.Sources.Force (signal in, force out on a flange)."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.variables import inp, out
from ..translational import MSL_FLANGE_B, TranslationalSlave, motion_in_flange
from . import law


class Force(TranslationalSlave):
    description = (
        "External force acting on a flange (Modelica.Mechanics.Translational.Sources.Force): input f pushes "
        "the body in +s, flange.f = -f out. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    INPUT_DERIVATIVES = True

    FLANGES = {"flange": MSL_FLANGE_B}  # MSL Sources.Force: Interfaces.Flange_b flange

    VARIABLES = [
        inp("f", 0.0, "N", "Driving force as input signal (acts on the body in +s direction)"),
        *motion_in_flange("flange", "force source"),
        out(
            "flange.f",
            "N",
            "Force acting on the source at its flange (MSL flange.f = -f)",
            depends=("f",),
            derivative=True,
        ),
        out(
            "power",
            "W",
            "Power the source delivers to the body (= f*flange.v)",
            depends=("f", "flange.v"),
        ),
    ]

    def compute_outputs(self):
        self.flange_f = law.force_source_flange_force(self.f)
        self.der_flange_f = law.force_source_flange_force(self.der_f)
        self.power = self.f * self.flange_v
