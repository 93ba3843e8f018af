"""TranslationalHardstop's force law written out from the MapleSim Translational Hardstop help
page, independently of contactfmu (the lower branch read as s_rel < -b/2).
"""


def hardstop_force(s_rel, v_rel, b, c, d):
    """The page's equation, with the lower branch read as s_rel < -b/2."""
    if b > 2e-10:
        if s_rel > b / 2:
            return c * (s_rel - b / 2) + d * v_rel
        if s_rel < -b / 2:
            return c * (s_rel + b / 2) + d * v_rel
        return 0.0
    return c * s_rel + d * v_rel
