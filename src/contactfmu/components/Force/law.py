"""Force: MSL Translational.Sources.Force."""


def force_source_flange_force(f):
    """MSL Sources.Force: flange.f = -f, so the body on the flange is pushed with +f."""
    return -f
