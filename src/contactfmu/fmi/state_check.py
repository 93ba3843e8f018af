"""The contents of a deserialized FMU state checked before it is accepted: a state whose fields were
edited and its seal recomputed (state.seal is a checksum, not a signature) must be refused with a
message, not restored into an instance that fails or crashes later.

``problem(cls, values)`` returns why the decoded attribute values of a state cannot be a state of
slave class ``cls``, or None:

* every model variable of the table is there, of its type (Real: a finite float; Integer: an int;
  Boolean: a bool), within its declared range (parameters of an initialized state, and outputs of
  type Integer); the published and input derivatives are floats, not nan (a rate may overflow to inf);
* the base's bookkeeping is of its type: ``time`` a finite float, ``_initialized``, ``_stale``,
  ``_fresh`` bools, ``_failed`` a str, ``_step_size`` None or a finite float > 0, ``_good`` the
  finite values of the checked outputs, ``_delivered`` None or a finite float;
* the parameters of an initialized state pass the slave's own checks (``check()``), and every
  other attribute has the shape of the same attribute of a template: an instance of ``cls`` given
  the state's variables but its inputs and, if the state is initialized, initialized with them at the state's
  time (the same class of objects, the same attributes, numbers of the same type; a float not a
  number nowhere, infinite only where the template's is). An attribute the template has must be
  in the state; where the template holds None (not yet set: a step size, a read value, a motion
  the element starts later) the state may hold any plain data (None, bools, strings, numbers not
  nan, and tuples, lists, dicts and objects of the build of them); a list may have another length than the template's
  (its elements are then checked as plain data); an int and a float stand for each other.

Generic: names no component and no physical domain. Only the standard library is imported."""

import math

_BOOKKEEPING = {
    "_initialized": bool,
    "_stale": bool,
    "_fresh": bool,
    "_failed": str,
}


def _finite_float(value):
    return type(value) is float and math.isfinite(value)


def problem(cls, values):
    """Why ``values`` (a state's decoded attributes) is no state of slave class ``cls``, or None."""
    table = cls.variable_table()
    for var in table:
        if var.attr not in values:
            return f"it lacks the variable {var.name}"
        why = _variable_problem(var, values[var.attr], values.get("_initialized") is True)
        if why:
            return why
    for name, kind in _BOOKKEEPING.items():
        if type(values.get(name)) is not kind:
            return f"{name} = {values.get(name)!r} is not {'a ' + kind.__name__}"
    if not _finite_float(values.get("time")):
        return f"its time {values.get('time')!r} is not a finite number of seconds"
    step = values.get("_step_size")
    if step is not None and not (_finite_float(step) and step > 0.0):
        return f"its last step size {step!r} is not a finite number > 0"
    good = values.get("_good")
    if not (
        type(good) is tuple
        and len(good) == len(cls._checked)
        and all(_finite_float(x) for x in good)
    ):
        return f"its last good outputs {good!r} are not {len(cls._checked)} finite numbers"
    delivered = values.get("_delivered")
    if delivered is not None and not _finite_float(delivered):
        return f"its recorded read {delivered!r} is not a finite number"
    for name, value in values.items():  # (a published rate overflows to inf for huge inputs)
        if name.startswith("der_") and not (type(value) is float and value == value):
            return f"the derivative {name[4:]} = {value!r} is not a number"
    return _template_problem(cls, values)


def _variable_problem(var, value, initialized):
    kind = {"Real": float, "Integer": int, "Boolean": bool}[var.type]
    if type(value) is not kind:
        return f"{var.name} = {value!r} is not of type {var.type}"
    if kind is float and not math.isfinite(value):
        return f"{var.name} = {value!r} is not a finite number"
    ranged = var.type != "Boolean" and (
        (var.causality == "parameter" and initialized) or var.type == "Integer"
    )
    if ranged and var.causality != "input":
        low = var.min is not None and (value < var.min or (var.min_exclusive and value == var.min))
        if low or (var.max is not None and value > var.max):
            return f"{var.name} = {value!r}{var.unit_text()} is outside its valid range {var.valid_range()}"
    return None


def _template_problem(cls, values):
    """The shape of every attribute against a template instance made from the state's variables
    (see the module's docstring)."""
    template = cls(instance_name="state check", resources="")
    for var in cls.variable_table():  # the inputs kept at their start values: any finite input
        if var.causality != "input":  # is legitimate, even one whose outputs overflow
            setattr(template, var.attr, values[var.attr])
    template.time = values["time"]
    if values["_initialized"]:
        bad = template._invalid_parameters()
        if bad:
            var, value, rule = bad[0]
            return f"its parameter {var.name} = {value!r}{var.unit_text()} is invalid: {rule}"
        template.exit_initialization_mode()
        if not template._initialized:
            return "its parameters and inputs do not initialize " + cls.__name__
    skip = set(template._infra)
    for name, expected in template.__dict__.items():
        if name not in skip and name not in values:
            return f"it lacks the attribute {name}"
    for name, value in values.items():
        if name in skip:
            return f"it sets {name}, which is not state"
        if name.startswith("der_"):  # checked above
            continue
        where = _shape_problem(value, template.__dict__.get(name), name)
        if where:
            return where
    return None


def _shape_problem(value, expected, where):
    """Why value does not have the shape of expected (the template's), or None."""
    if type(value) is float and value != value:
        return f"{where} = nan"
    if expected is None:  # a value that appears later (a step size, a read value, a motion)
        return _plain_problem(value, where)
    if value is None:
        if _is_object(expected):
            return f"{where} is None, not a {type(expected).__name__}"
        return None
    if type(value) in _NUMBERS and type(expected) in _NUMBERS:  # 3 and 3.0 alike
        if type(value) is float and math.isinf(value) and not math.isinf(expected):
            return f"{where} = {value!r} is not finite"
        return None
    if type(value) is not type(expected):
        return f"{where} = {value!r} is a {type(value).__name__}, not a {type(expected).__name__}"
    if type(value) is float:
        if math.isinf(value) and not math.isinf(expected):
            return f"{where} = {value!r} is not finite"
        return None
    if isinstance(value, (tuple, list)):
        if isinstance(value, tuple) and len(value) != len(expected):
            return f"{where} has {len(value)} elements, not {len(expected)}"
        # a list may grow or shrink: its elements are then checked as plain values
        pairs = zip(value, expected) if len(value) == len(expected) else ((v, None) for v in value)
        for k, (v, e) in enumerate(pairs):
            why = _shape_problem(v, e, f"{where}[{k}]")
            if why:
                return why
        return None
    if type(value) is dict:
        for k, v in value.items():
            why = _shape_problem(v, expected.get(k), f"{where}[{k!r}]")
            if why:
                return why
        return None
    if _is_object(value):
        mine, theirs = _attrs(value), _attrs(expected)
        if mine.keys() != theirs.keys():
            return f"{where} has the attributes {sorted(mine)}, not {sorted(theirs)}"
        for k, v in mine.items():
            why = _shape_problem(v, theirs[k], f"{where}.{k}")
            if why:
                return why
    return None


_NUMBERS = (int, float)


def _plain_problem(value, where):
    """Why a value the template has no counterpart for is not plain data (None, bools, numbers
    that are not nan, strings, and tuples, lists, dicts and objects of the build of them), or
    None."""
    if type(value) is float and value != value:
        return f"{where} = nan"
    if isinstance(value, (tuple, list)):
        for k, v in enumerate(value):
            why = _plain_problem(v, f"{where}[{k}]")
            if why:
                return why
        return None
    if type(value) is dict:
        for k, v in value.items():
            why = _plain_problem(v, f"{where}[{k!r}]")
            if why:
                return why
        return None
    if value is None or type(value) in (bool, int, float, str):
        return None
    if _is_object(value):  # one of the build's own (state.decode_all makes no other)
        for k, v in _attrs(value).items():
            why = _plain_problem(v, f"{where}.{k}")
            if why:
                return why
        return None
    return f"{where} = {value!r} is not plain data"


def _is_object(value):
    return not isinstance(value, (bool, int, float, str, tuple, list, dict, type(None)))


def _attrs(obj):
    attrs = {}
    for c in type(obj).__mro__:
        slots = c.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                attrs[name] = getattr(obj, name)
    attrs.update(getattr(obj, "__dict__", {}))
    return attrs
