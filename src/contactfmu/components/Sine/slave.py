"""Sine FMU: MSL Blocks.Sources.Sine, a signal source."""

from pythonfmu.default_experiment import DefaultExperiment

from ...fmi.slave import Slave
from ...fmi.variables import out, parameter
from . import law


class Sine(Slave):
    description = (
        "Sine signal (Modelica.Blocks.Sources.Sine): y = offset + amplitude*sin(2*pi*f*(time - startTime) + "
        "phase) from startTime on. Equations and variables: documentation/index.html."
    )
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=1.0, step_size=1e-3)

    VARIABLES = [
        parameter("amplitude", 1.0, "1", "Amplitude of sine wave"),
        parameter("f", 1.0, "Hz", "Frequency of sine wave", min=0.0),
        parameter("phase", 0.0, "rad", "Phase of sine wave"),
        parameter("offset", 0.0, "1", "Offset of output signal y"),
        parameter("startTime", 0.0, "s", "Output y = offset for time < startTime"),
        out("y", "1", "Connector of Real output signal", derivative=True),
    ]

    def compute_outputs(self):
        self.y = law.sine(
            self.time, self.amplitude, self.f, self.phase, self.offset, self.startTime
        )
        self.der_y = law.sine_derivative(
            self.time, self.amplitude, self.f, self.phase, self.startTime
        )
