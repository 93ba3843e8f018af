"""The variable table of a slave: one :class:`Var` row per FMI variable, made with
:func:`parameter`, :func:`inp` and :func:`out`, and the units they may carry.

Generic: names no component and no physical domain. Only the standard library is imported
(this module runs inside the FMUs)."""

# Units with their SI base-unit exponents (FMI 2.0 UnitDefinitions).
UNITS = {
    "m": {"m": 1},
    "m/s": {"m": 1, "s": -1},
    "m/s2": {"m": 1, "s": -2},
    "N": {"kg": 1, "m": 1, "s": -2},
    "N/m": {"kg": 1, "s": -2},
    "N.s/m": {"kg": 1, "s": -1},
    "kg": {"kg": 1},
    "s": {"s": 1},
    "Hz": {"s": -1},
    "rad": {"rad": 1},
    "W": {"kg": 1, "m": 2, "s": -3},
    "K": {"K": 1},
    "J": {"kg": 1, "m": 2, "s": -2},
    "N.s": {"kg": 1, "m": 1, "s": -1},
    "s/m": {"m": -1, "s": 1},
    "1": {},
}


class Var:
    """One row of a slave's variable table."""

    __slots__ = (
        "name",
        "attr",
        "type",
        "causality",
        "variability",
        "start",
        "unit",
        "description",
        "min",
        "max",
        "min_exclusive",
        "initial",
        "depends",
        "vr",
        "derivative",
    )

    def __init__(
        self,
        name,
        type_,
        causality,
        variability,
        start,
        unit,
        description,
        min_=None,
        max_=None,
        min_exclusive=False,
        initial=None,
        depends=(),
        derivative=False,
    ):
        self.name = name
        self.derivative = derivative
        self.attr = name.replace(".", "_")
        self.type = type_
        self.causality = causality
        self.variability = variability
        self.start = start
        self.unit = unit
        self.description = description
        self.min = min_
        self.max = max_
        self.min_exclusive = min_exclusive
        self.initial = initial
        self.depends = tuple(depends)
        self.vr = None

    def valid_range(self):
        lo = "-inf" if self.min is None else repr(self.min)
        hi = "inf" if self.max is None else repr(self.max)
        return (
            ("(" if self.min_exclusive or self.min is None else "[")
            + lo
            + ", "
            + hi
            + (")" if self.max is None else "]")
        )

    def unit_text(self):
        return "" if self.unit in (None, "1") else " " + self.unit


def _kind(value):
    return "Boolean" if isinstance(value, bool) else "Integer" if isinstance(value, int) else "Real"


def parameter(name, start, unit, description, min=None, max=None, min_exclusive=False):
    """A fixed parameter (causality parameter, initial exact). ``min_exclusive``: the value must
    be > min; FMI 2.0 has no exclusive minimum, so the model description declares min and the
    description says "must be > min" (the check refuses min itself)."""
    if min_exclusive and "must be >" not in description:
        description += f" (must be > {min:g})"
    return Var(
        name,
        _kind(start),
        "parameter",
        "fixed",
        start,
        unit,
        description,
        min,
        max,
        min_exclusive,
        "exact",
    )


def inp(name, start, unit, description):
    """An input (continuous for Real, discrete for Integer/Boolean)."""
    kind = _kind(start)
    return Var(
        name,
        kind,
        "input",
        "continuous" if kind == "Real" else "discrete",
        start,
        unit,
        description,
    )


def out(name, unit, description, depends=(), start=None, kind="Real", derivative=False):
    """An output. ``depends`` lists the inputs it depends on directly (feed-through);
    ``start`` makes it initial="exact" (a start value the user may set, like s(start=...));
    ``derivative`` publishes its first time derivative (fmi2GetRealOutputDerivatives)."""
    variability = "continuous" if kind == "Real" else "discrete"
    initial = "exact" if start is not None else "calculated"
    if derivative:
        description += " (first derivative available)"
    return Var(
        name,
        kind,
        "output",
        variability,
        start,
        unit,
        description,
        initial=initial,
        depends=depends,
        derivative=derivative,
    )


def fmt(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def article(kind):
    return ("an " if kind[0] in "AEIOU" else "a ") + kind
