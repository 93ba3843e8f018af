"""The conventions the FMUs and the master share, written once: what the master needs from an
FMU, declared by its variables and naming conventions. The components' slaves declare their
variables with these names (components/translational.py), the master reads them (cosim/); neither
imports the other. The master knows no component by name; an FMU of another tool that follows
these conventions takes part like the project's own. Standard library only (bundled into the
FMUs).

Flanges (docs/conventions.md):
  <flange>.s / .v / .a / .f  position, velocity, acceleration, force (MSL names); SimulationX
      connectors use .x for the position and .F for the force (PORT_ALIASES).
  An inertial flange outputs s (and v, a) and takes f as input (a body); a compliant flange takes
  the motion as input and outputs f (the Modelica flange.f of the element, the force acting on it).
  Several compliant elements on one inertial flange: the master sums their forces into .f.
  Each flange is also a terminal (terminalsAndIcons.xml) with the members FLANGE_MEMBERS.

Compliant elements that can be coupled implicitly declare their linearization:
  interface.c = df/ds_rel, interface.d = df/dv_rel  (INTERFACE), flange_b.f = f = -flange_a.f;
  the ModelStructure says whether they depend on the inputs (then the element is re-evaluated at
  the predicted end state, Newton's method).
  An element that integrates its contact itself (one given the inertias attached at its
  flanges) says so by its Boolean output
  INTEGRATES (true): it holds a coupling force of its own over each step and locates its own
  events, so it is never linearized or probed, its discrete outputs are not searched for events
  and the bodies it joins are left out of the adaptive master's error estimate (their motion at
  a step's end depends on the step by design: an impulse spread over the steps around an impact).

Bodies declare their inertia by a Real output INERTIA [kg] (> 0; a body without it, such as a
fixed point or another tool's FMU, does not move in the implicit prediction).

The master reads INERTIA and INTEGRATES in initialization mode, after the parameters are set.

Discrete state: every Integer and Boolean output of an FMU (contact, stop and friction states,
modes) is a state whose change is an event the adaptive master locates (DISCRETE_TYPES).
"""

FLANGE_MEMBERS = (
    "s",
    "v",
    "a",
    "f",
)  # a flange's variables (MSL names), its terminal's memberNames
FORCE_INPUTS_PER_FLANGE = 4  # an inertial flange sums <flange>.f, .f2, .f3, .f4
PORT_ALIASES = {"s": "x", "f": "F"}  # SimulationX connector names of position and force
INTERFACE = ("interface.c", "interface.d")  # outputs df/ds_rel and df/dv_rel of a compliant element
COMPLIANT_FORCES = ("flange_a.f", "flange_b.f")
INERTIA = "interface.m"  # a body's inertia [kg]: a Real output
INTEGRATES = (
    "interface.integrates"  # Boolean output, true: the element integrates its contact itself
)
DISCRETE_TYPES = ("Integer", "Boolean")  # outputs of these types are discrete states (events)


def port(variables, flange, what):
    """Name of a flange's position ('s'), velocity ('v'), acceleration ('a') or force ('f') variable
    among `variables`: <flange>.<what>, or the SimulationX name where only that exists."""
    name = f"{flange}.{what}"
    alias = f"{flange}.{PORT_ALIASES.get(what, what)}"
    return alias if name not in variables and alias in variables else name
