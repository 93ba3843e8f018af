"""pythonfmu slaves, one module per FMU, and the shared slave base (_base.py).

SLAVES maps each FMU name to the module that defines its slave class."""
SLAVES = {
    "Mass": "mass",
    "Fixed": "fixed",
    "Spring": "spring",
    "Damper": "damper",
    "SpringDamper": "spring_damper",
    "Force": "force",
    "Sine": "sine",
    "ElastoGap": "elastogap",
    "TranslationalHardstop": "translational_hardstop",
    "EndStop": "end_stop",
    "MassWithStopAndFriction": "mass_with_stop_and_friction",
}
