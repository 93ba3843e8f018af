"""The getters and setters of a slave (included in fmi.slave.Slave, see _including): values read from and written
to the slave's attributes by value reference, in batches planned once per set of value
references; outputs computed lazily from the inputs just set; every refusal with its reason."""

import math
import operator

from .shim import DERIVATIVE_VR
from .variables import article

_isfinite = math.isfinite
_copysign = math.copysign


def _identical(a, b):
    """a and b are the same value, bit for bit (0.0 and -0.0 differ; no NaN is ever set)."""
    return a == b and (a != 0 or _copysign(1.0, a) == _copysign(1.0, b))


class Values:
    """Getters and setters of fmi.slave.Slave (its attributes and tables: _get_attrs, _by_vr,
    _fast_get, _set_plans, the recorded read of RECORDED_READ)."""

    def _get(self, vrs, kind, convert, default, call):
        """Values of a getter; a Real value that is not finite (an output computed from the
        present inputs) fails the call (see _outputs_failed): fmi2Error, and the outputs of the
        last successful doStep are returned (one math.isfinite over the sum of the batch when all
        is well)."""
        if self._stale:
            try:
                self._compute(call)
            except Exception:
                self._crash("compute_outputs")
        key = (kind, tuple(vrs))
        if self._held_vrs:
            reads = self._held_reads.get(key)
            if reads is None:
                reads = self._held_reads[key] = not self._held_vrs.isdisjoint(key[1])
            if reads:
                self._delivered = getattr(self, self.RECORDED_READ[0])
        fast = self._fast_get.get(key)
        if fast is None:  # first request of these variables: plain model variables only?
            attrs = self._get_attrs[kind]
            fast = (
                bool(vrs)
                and all(vr in attrs for vr in vrs)
                and (
                    len(vrs),
                    operator.attrgetter(*(attrs[vr] for vr in vrs)),
                    kind == "Real",
                    "fmi2GetRealOutputDerivatives" if max(vrs) >= DERIVATIVE_VR else call,
                )
            )
            self._fast_get[key] = fast
        if fast:
            n, getter, real, label = fast
            if n > 1:
                values = getter(self)
                if real and not _isfinite(sum(values)) and self._outputs_failed(label):
                    values = getter(self)
                return [convert(x) for x in values]
            value = getter(self)
            if real and not _isfinite(value) and self._outputs_failed(label):
                value = getter(self)
            return [convert(value)]
        values = self._values(vrs, kind, convert, default, call)
        if kind == "Real" and not _isfinite(sum(values)) and self._outputs_failed(call):
            values = self._values(vrs, kind, convert, default, None)
        return values

    def _values(self, vrs, kind, convert, default, call):
        """Values of a getter one by one; a value reference that is not a variable of this type
        (or an output without derivative) refuses the call (logged unless call is None) and
        delivers the default value."""
        attrs = self._get_attrs[kind]
        values = []
        for vr in vrs:
            attr = attrs.get(vr)
            if attr is None:
                if call is not None:
                    self._refuse(self._not_gettable(vr, kind, call))
                values.append(default)
            else:
                values.append(convert(getattr(self, attr)))
        return values

    def _not_gettable(self, vr, kind, call):
        if kind == "Real" and vr >= DERIVATIVE_VR:
            var = self._by_vr.get(vr - DERIVATIVE_VR)
            return (
                f"fmi2GetRealOutputDerivatives refused: {var.name if var else vr - DERIVATIVE_VR} has no "
                f"derivative; available for: {', '.join(v.name for v in self.variable_table() if v.derivative)}"
            )
        return f"{call} refused: {self._not_a(vr, kind)}"

    def _not_a(self, vr, kind):
        var = self._by_vr.get(vr)
        if var is None:
            return f"value reference {vr} is not a variable of {self.modelName}"
        return (
            f"{var.name} (value reference {vr}) is {article(var.type)} variable of {self.modelName}, "
            f"not {article(kind)} one"
        )

    def get_real(self, vrs):
        try:
            return self._get(vrs, "Real", float, 0.0, "fmi2GetReal")
        except Exception:
            self._crash("fmi2GetReal")
            return [0.0] * len(vrs)

    def get_integer(self, vrs):
        try:
            return self._get(vrs, "Integer", int, 0, "fmi2GetInteger")
        except Exception:
            self._crash("fmi2GetInteger")
            return [0] * len(vrs)

    def get_boolean(self, vrs):
        try:
            return self._get(vrs, "Boolean", bool, False, "fmi2GetBoolean")
        except Exception:
            self._crash("fmi2GetBoolean")
            return [False] * len(vrs)

    def get_string(self, vrs):
        self._refuse(f"fmi2GetString refused: {self.modelName} has no String variables")
        return [""] * len(vrs)

    def _set(self, vrs, values, kind, convert, call):
        """A set call: all its values are set, or none (each refused one logged, the call
        refused). The plan of a batch of value references is cached; the values of a Real batch
        are checked with one math.isfinite over their sum."""
        plan = self._set_plans[kind][self._initialized].get(tuple(vrs))
        if plan is None:
            plan = self._set_plan(kind, vrs)
        if plan and (kind != "Real" or _isfinite(sum(values))):
            attrs, resets = plan
            if kind != "Real":  # Real: floats from pythonfmu
                values = [convert(value) for value in values]
            # outputs computed for these very inputs stay current (not recomputed on the next
            # read) if every value is the one the instance holds, bit for bit, as it was computed
            same = not self._stale and self._fresh
            state = self.__dict__
            for attr, value in zip(attrs, values):
                if same:
                    same = _identical(state[attr], value)
                state[attr] = value
            for attr in resets:
                if same:
                    same = _identical(state[attr], 0.0)
                state[attr] = 0.0  # a new input value without a derivative: held
            if not same:
                self._stale = self._fresh = True
        else:
            self._set_checked(vrs, values, kind, convert, call)

    def _set_plan(self, kind, vrs):
        """(attributes set, input derivatives reset) by a set call of these value references, or
        False if one of them is refused (the call then takes _set_checked, which logs why)."""
        targets = [self._settable(vr, kind) for vr in vrs]
        plan = all(isinstance(t, tuple) for t in targets) and (
            tuple(t[0] for t in targets),
            tuple(t[1] for t in targets if t[1]),
        )
        self._set_plans[kind][self._initialized][tuple(vrs)] = plan
        return plan

    def _settable(self, vr, kind):
        """(attribute, input derivative to reset or None, what it is) of a value reference a set
        call of this type may set now, else why not (a str)."""
        var = self._by_vr.get(vr)
        if var is None and kind == "Real" and vr >= DERIVATIVE_VR:
            var = self._by_vr.get(vr - DERIVATIVE_VR)
            if (
                self.INPUT_DERIVATIVES
                and var is not None
                and var.causality == "input"
                and var.type == "Real"
            ):
                return "der_" + var.attr, None, f"the derivative of input {var.name}"
            return (
                f"value reference {vr - DERIVATIVE_VR} is not a Real input of {self.modelName} that takes "
                f"derivatives"
            )
        if var is None or var.type != kind:
            return self._not_a(vr, kind)
        if var.causality == "output" and (var.initial != "exact" or self._initialized):
            return f"{var.name} is an output and cannot be set" + (
                " after initialization" if var.initial == "exact" else ""
            )
        if var.causality == "parameter" and self._initialized:
            return f"parameter {var.name} is fixed after initialization (value {getattr(self, var.attr)!r} kept)"
        reset = (
            "der_" + var.attr
            if self.INPUT_DERIVATIVES and var.causality == "input" and kind == "Real"
            else None
        )
        return var.attr, reset, f"{var.causality} {var.name}"

    def _set_checked(self, vrs, values, kind, convert, call):
        updates, refused = [], []
        for vr, value in zip(vrs, values):
            label = (
                "fmi2SetRealInputDerivatives" if kind == "Real" and vr >= DERIVATIVE_VR else call
            )
            target = self._settable(vr, kind)
            if isinstance(target, str):
                refused.append(f"{label} refused: {target}")
                continue
            attr, reset, what = target
            value = convert(value)
            if kind == "Real" and not _isfinite(value):
                refused.append(
                    f"{label} refused: non-finite value {value!r} for {what}; previous value "
                    f"{getattr(self, attr)!r} kept"
                )
                continue
            updates.append((attr, reset, value))
        if refused:
            note = f" (none of the {len(vrs)} values of this call is set)" if len(vrs) > 1 else ""
            for message in refused:
                self._refuse(message + note)
            return
        for attr, reset, value in updates:
            setattr(self, attr, value)
            if reset:
                setattr(self, reset, 0.0)
        self._stale = self._fresh = True

    def set_real(self, vrs, values):
        try:
            self._set(vrs, values, "Real", float, "fmi2SetReal")
        except Exception:
            self._crash("fmi2SetReal")

    def set_integer(self, vrs, values):
        try:
            self._set(vrs, values, "Integer", int, "fmi2SetInteger")
        except Exception:
            self._crash("fmi2SetInteger")

    def set_boolean(self, vrs, values):
        try:
            self._set(vrs, values, "Boolean", bool, "fmi2SetBoolean")
        except Exception:
            self._crash("fmi2SetBoolean")

    def set_string(self, vrs, values):
        self._refuse(f"fmi2SetString refused: {self.modelName} has no String variables")
