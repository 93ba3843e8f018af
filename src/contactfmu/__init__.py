"""contactfmu: translational contact and end-stop components as FMI 2.0 Co-Simulation FMUs."""

__version__ = "0.1.0"
