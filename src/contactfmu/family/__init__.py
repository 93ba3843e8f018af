"""A family of test systems the project does not tune to: bodies (Mass, MassWithStopAndFriction)
in chains, trees and loops, joined by every compliant element and contact, driven by sine forces,
their parameters drawn from a seed (systems.generate), each with a monolithic reference solution written
from the documented laws (reference) and its co-simulation from the FMUs (build)."""

from .systems import BODIES, DRAWN, LINKS, TOPOLOGIES, Body, Drive, Link, Spec, generate

__all__ = ["BODIES", "DRAWN", "LINKS", "TOPOLOGIES", "Body", "Drive", "Link", "Spec", "generate"]
