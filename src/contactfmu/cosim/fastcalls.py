"""Batched FMI calls with preallocated buffers, for the master's per-step exchange.

fmpy's FMU2Slave.getReal/setReal build two ctypes arrays and a list on every call and route it
through a logging wrapper (about 3.5 us per call against 1.5 us for the bare call). The master's
exchange repeats the same calls with the same value references at every communication point,
so it binds them once: a :class:`Reader` fills one buffer per instance and variable list, a
:class:`Writer` gathers values from reader buffers (sums and offsets) into one set call per
instance. The FMI functions are fmpy's own ctypes bindings (``FMU2Slave._functions``); only
the wrapper is bypassed, so the status of every call is checked here.

A :class:`Program` is an exchange written as an ordered list of reads, writes and steps of the
master's own (``call``), compiled once into the fewest such calls that deliver the same values
to the same inputs in the same state: every read and write of one instance and FMI function that
the order lets meet is one call (below); ``Program(batched=False)`` compiles one call per value,
the reference the batched program is tested against.
"""

from ctypes import CFUNCTYPE, _CFuncPtr, byref, c_int, c_size_t, c_void_p, cast

from fmpy.fmi2 import fmi2Boolean, fmi2FMUstate, fmi2Integer, fmi2Real, fmi2ValueReference

_TYPES = {
    "Real": fmi2Real,
    "Integer": fmi2Integer,
    "Enumeration": fmi2Integer,
    "Boolean": fmi2Boolean,
}
_STATUS = {2: "discard", 3: "error", 4: "fatal", 5: "pending"}


def check(inst, name, status, t):
    """Raise the instance's CosimError if an FMI call returned worse than fmi2Warning."""
    if status > 1:
        raise inst.fail(name, f"{name} failed with status {status} ({_STATUS.get(status, '?')})", t)


_BARE = CFUNCTYPE(c_int)  # a C function returning int, arguments passed as they are given


def bound(inst, name):
    """(function, instance handle, count) for the master's calls of FMI function `name` of an
    instance: fmpy's ctypes function without its argument conversion (the same C function through
    a pointer without argtypes, called with ctypes arguments only: the handle as a c_void_p, a
    number of values through ``count``, c_size_t; a fifth less time per fmi2GetReal of two values
    than through fmpy's wrapper), or a function that is not a ctypes one (an FMI 3.0 adapter, a counting wrapper) as it
    is, with the plain handle and ``count`` = int. Floating-point arguments are passed as C
    doubles (fmi2DoStep's times: algorithms.base.DoSteps): without argtypes, ctypes would not
    convert Python floats."""
    fn = inst.slave._functions[name]
    if isinstance(fn, _CFuncPtr):
        return _BARE(cast(fn, c_void_p).value), c_void_p(inst.slave.component), c_size_t
    return fn, inst.slave.component, int


class States:
    """fmi2GetFMUstate, fmi2SetFMUstate and fmi2FreeFMUstate of every instance, bound once
    (``bound``: no logging wrapper, no argument conversion): ``save()`` returns the
    states, ``restore(states)`` and ``free(states)`` take them; a failed call raises the
    instance's CosimError."""

    def __init__(self, instances):
        self.bound = []
        for inst in instances:
            get, c, _ = bound(inst, "fmi2GetFMUstate")
            set_, free = bound(inst, "fmi2SetFMUstate")[0], bound(inst, "fmi2FreeFMUstate")[0]
            self.bound.append((inst, c, get, set_, free))

    def save(self, t=None):
        states = []
        for inst, c, get, _, _ in self.bound:
            state = fmi2FMUstate()
            check(inst, "fmi2GetFMUstate", get(c, byref(state)), t)
            states.append(state)
        return states

    def restore(self, states, t=None, keep=()):
        """Restore every instance but those named in `keep`."""
        for (inst, c, _, set_, _), state in zip(self.bound, states):
            if inst.name not in keep:
                check(inst, "fmi2SetFMUstate", set_(c, state), t)

    def free(self, states, t=None):
        for (inst, c, _, _, free), state in zip(self.bound, states):
            check(inst, "fmi2FreeFMUstate", free(c, byref(state)), t)


def _function(kind, direction, derivative):
    if derivative:
        return (
            "fmi2GetRealOutputDerivatives" if direction == "Get" else "fmi2SetRealInputDerivatives"
        )
    return f"fmi2{direction}{'Integer' if kind == 'Enumeration' else kind}"


class Reader:
    """One fmi2Get<kind> (or fmi2GetRealOutputDerivatives, order 1) call of fixed value references."""

    __slots__ = ("inst", "name", "fn", "c", "vr", "n", "count", "buf", "order")

    def __init__(self, inst, vrs, kind="Real", derivative=False):
        self.inst = inst
        self.name = _function(kind, "Get", derivative)
        self.fn, self.c, count = bound(inst, self.name)
        self.n = len(vrs)
        self.count = count(self.n)
        self.vr = (fmi2ValueReference * self.n)(*vrs)
        self.buf = (_TYPES[kind] * self.n)()
        self.order = (fmi2Integer * self.n)(*([1] * self.n)) if derivative else None

    def __call__(self, t):
        if self.order is None:
            status = self.fn(self.c, self.vr, self.count, self.buf)
        else:
            status = self.fn(self.c, self.vr, self.count, self.order, self.buf)
        if status > 1:
            check(self.inst, self.name, status, t)
        return self.buf


class Writer:
    """One fmi2Set<kind> (or fmi2SetRealInputDerivatives) call of fixed value references whose
    values are sums of reader buffer entries plus an offset: slots [(terms, offset)], terms
    [(buffer, index)], added in the given order after the offset."""

    __slots__ = ("inst", "name", "fn", "c", "vr", "n", "count", "buf", "order", "slots", "copies")

    def __init__(self, inst, vrs, slots, kind="Real", derivative=False):
        self.inst = inst
        self.name = _function(kind, "Set", derivative)
        self.fn, self.c, count = bound(inst, self.name)
        self.n = len(vrs)
        self.count = count(self.n)
        self.vr = (fmi2ValueReference * self.n)(*vrs)
        self.buf = (_TYPES[kind] * self.n)()
        self.order = (fmi2Integer * self.n)(*([1] * self.n)) if derivative else None
        self.slots = [(k, tuple(terms), offset) for k, (terms, offset) in enumerate(slots)]
        # every value one entry plus its offset (a copy, as most are): the same sums, unrolled
        self.copies = None
        if all(len(terms) == 1 for _, terms, _ in self.slots):
            self.copies = [(k, *terms[0], offset) for k, terms, offset in self.slots]

    def __call__(self, t):
        buf = self.buf
        if self.copies is not None:
            for k, source, i, offset in self.copies:
                buf[k] = offset + source[i]
        else:
            for k, terms, offset in self.slots:
                value = offset
                for source, i in terms:
                    value += source[i]
                buf[k] = value
        if self.order is None:
            status = self.fn(self.c, self.vr, self.count, buf)
        else:
            status = self.fn(self.c, self.vr, self.count, self.order, buf)
        if status > 1:
            check(self.inst, self.name, status, t)


def grouped(items):
    """{instance name: (instance, [item, ...])} in first-seen order."""
    groups = {}
    for inst, *rest in items:
        groups.setdefault(inst.name, (inst, []))[1].append(tuple(rest))
    return groups


class Slot:
    """Where one value a Program reads lands: ``buf[i]``, known once the program is compiled."""

    __slots__ = ("buf", "i")

    def __init__(self):
        self.buf, self.i = None, 0


def _resolved(term):
    return (term.buf, term.i) if isinstance(term, Slot) else term


class _Group:
    """The reads or writes of one instance and FMI function that become one call."""

    __slots__ = ("inst", "key", "vrs", "items", "write")

    def __init__(self, inst, key, write):
        self.inst, self.key, self.write = inst, key, write
        self.vrs, self.items = [], []  # items: read Slots, or write values (terms, offset)

    def add(self, vrs, items):
        for vr, item in zip(vrs, items):
            if self.write and vr in self.vrs:  # set again before anything read it: the last value
                self.items[self.vrs.index(vr)] = item
            else:
                self.vrs.append(vr)
                self.items.append(item)

    def bind(self):
        kind, derivative = self.key
        if not self.write:
            reader = Reader(self.inst, self.vrs, kind, derivative)
            for k, slot in enumerate(self.items):
                slot.buf, slot.i = reader.buf, k
            return reader
        values = [(tuple(_resolved(t) for t in terms), offset) for terms, offset in self.items]
        return Writer(self.inst, self.vrs, values, kind, derivative)


class Program:
    """An exchange as an ordered list of ``read`` (values into Slots), ``write`` (an input set to
    a sum of Slots or (buffer, index) entries plus an offset) and ``call`` (a step of the master's
    own, fn(t), which may use and change what was read), compiled by :meth:`compile` into a list
    of calls fn(t).

    Batched, every instance's reads and writes are gathered per FMI function as far as the order
    allows, so that each call sees the instance exactly as the listed order would have: a write is
    held back and merged with later writes of the same instance and function until the instance
    is read (or written through another function, or a ``call`` comes: the order of those is
    kept; a value set twice meanwhile is set once, to its last value); a read joins the
    instance's earlier read call of the same function if nothing was set on that instance in
    between (its outputs are then the same). Between instances the order does not matter (an
    instance's outputs depend on its own inputs only). A write's value is computed where it is
    made; the Slots and entries it sums cannot change in between (every read call runs once, and
    a ``call`` comes only after the writes before it are made).

    batched=False: one FMI call per value, in the listed order (the reference)."""

    def __init__(self, batched=True):
        self.batched = batched
        self.ops = []

    def read(self, inst, vrs, kind="Real", derivative=False):
        """Slots of the values of ``vrs`` (fmi2Get<kind>, or fmi2GetRealOutputDerivatives)."""
        slots = [Slot() for _ in vrs]
        self.ops.append(("read", inst, (kind, derivative), list(vrs), slots))
        return slots

    def write(self, inst, vrs, values, kind="Real", derivative=False):
        """Set ``vrs`` to ``values`` [(terms, offset)]: offset plus the terms (Slots or (buffer,
        index)) added in order (fmi2Set<kind>, or fmi2SetRealInputDerivatives)."""
        self.ops.append(("write", inst, (kind, derivative), list(vrs), list(values)))

    def call(self, fn):
        """fn(t) at this point of the exchange."""
        self.ops.append(("call", fn))

    def join(self, inst, vr, depends=None, kind="Real"):
        """The Slot of output ``vr`` of ``inst`` read with the instance's last read of ``kind``
        after which no input the output depends on is set (``depends``: input value references;
        None: every input), so that it holds the value the output has at the end of the exchange;
        None where there is no such read, or a ``call`` (which may set anything) comes after it.
        Input derivatives do not change an output's value."""
        key = (kind, False)
        for op in reversed(self.ops):
            if op[0] == "call":
                return None
            _, inst_, (_, derivative), vrs, items = op
            if inst_ is not inst or derivative:
                continue
            if op[0] == "write":
                if depends is None or not depends.isdisjoint(vrs):
                    return None
            elif op[2] == key:
                if vr not in vrs:
                    vrs.append(vr)
                    items.append(Slot())
                return items[vrs.index(vr)]
        return None

    def compile(self):
        """The calls fn(t) of the exchange, in order."""
        out = []
        if not self.batched:
            for op in self.ops:
                if op[0] == "call":
                    out.append(op[1])
                    continue
                kind, inst, key, vrs, items = op
                for vr, item in zip(vrs, items):
                    group = _Group(inst, key, kind == "write")
                    group.add([vr], [item])
                    out.append(group)
            return self._bind(out)
        pending = {}  # instance name: [write groups not yet made, in order]
        reading = {}  # instance name: {key: its open read group}
        for op in self.ops:
            if op[0] == "call":
                for name in list(pending):
                    out.extend(pending.pop(name))
                reading.clear()
                out.append(op[1])
                continue
            kind, inst, key, vrs, items = op
            name = inst.name
            if kind == "read":
                if name in pending:
                    out.extend(pending.pop(name))
                    reading.pop(name, None)
                groups = reading.setdefault(name, {})
                group = groups.get(key)
                if group is None:
                    group = groups[key] = _Group(inst, key, False)
                    out.append(group)
                group.add(vrs, items)
            else:
                writes = pending.setdefault(name, [])
                if not writes or writes[-1].key != key:
                    writes.append(_Group(inst, key, True))
                writes[-1].add(vrs, items)
        for writes in pending.values():
            out.extend(writes)
        return self._bind(out)

    @staticmethod
    def _bind(out):
        # readers first: the writers' terms are their buffers
        bound = {id(g): g.bind() for g in out if isinstance(g, _Group) and not g.write}
        bound.update({id(g): g.bind() for g in out if isinstance(g, _Group) and g.write})
        return [bound.get(id(g), g) for g in out]
