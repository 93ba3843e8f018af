"""The child process of tests/fmi/test_fmi3_sequences.py: runs FMI 3.0 call sequences against one
FMU through its raw C functions (ctypes, statuses as returned) and reports every call, so that a
crash or a hang of the FMU ends this process, not the test run.

    python fmi3_sequence_driver.py <unzipped FMU> <modelIdentifier> <instantiationToken>

reads one plan a line (JSON, see test_fmi3_sequences.py) from stdin and writes one JSON line per
call as soon as it returns ({"call", "status", "log": [[status, message]], and what the call
gave}), then {"done": true}. The parent checks them against the FMI 3.0 text."""

import ctypes as C
import json
import math
import os
import sys
import time

from fmpy import read_model_description

STATE_FUNCTIONS = ("fmi3GetFMUState", "fmi3SetFMUState", "fmi3FreeFMUState")
LOG = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_char_p, C.c_char_p)
UPDATE = C.CFUNCTYPE(
    None,
    C.c_void_p,
    C.c_double,
    C.c_bool,
    C.c_bool,
    C.c_bool,
    C.c_bool,
    C.POINTER(C.c_bool),
    C.POINTER(C.c_double),
)
VR = C.POINTER(C.c_uint32)


class Driver:
    def __init__(self, unzipped, identifier, token):
        self.lib = C.CDLL(os.path.join(unzipped, "binaries", "x86_64-linux", identifier + ".so"))
        self.resources = os.path.join(unzipped, "resources")
        self.token = token.encode()
        md = read_model_description(unzipped)
        self.vars = {v.name: v for v in md.modelVariables}
        self.outputs = [v for v in md.modelVariables if v.causality == "output"]
        self.messages = []
        self.log_cb = LOG(
            lambda env, status, cat, msg: self.messages.append([status, msg.decode()])
        )
        self.update_cb = UPDATE(self._update)
        self.instance = None
        self.states = {}
        self.blobs = {}
        for name, argtypes in {
            "fmi3DoStep": [
                C.c_void_p,
                C.c_double,
                C.c_double,
                C.c_bool,
                C.POINTER(C.c_bool),
                C.POINTER(C.c_bool),
                C.POINTER(C.c_bool),
                C.POINTER(C.c_double),
            ],
            "fmi3EnterInitializationMode": [
                C.c_void_p,
                C.c_bool,
                C.c_double,
                C.c_double,
                C.c_bool,
                C.c_double,
            ],
        }.items():
            getattr(self.lib, name).argtypes = argtypes
        self.lib.fmi3InstantiateCoSimulation.restype = C.c_void_p
        self.lib.fmi3InstantiateCoSimulation.argtypes = [
            C.c_char_p,
            C.c_char_p,
            C.c_char_p,
            C.c_bool,
            C.c_bool,
            C.c_bool,
            C.c_bool,
            VR,
            C.c_size_t,
            C.c_void_p,
            LOG,
            UPDATE,
        ]
        self.lib.fmi3FreeInstance.argtypes = [C.c_void_p]

    def emit(self, record):
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    # ---- the intermediate-update callback: the plan's answers in turn ------------------------

    def _update(self, env, t, set_requested, get_allowed, finished, can_return, requested, when):
        answer = self.answers[self.answered % len(self.answers)] if self.answers else ["decline"]
        self.answered += 1
        record = {"call": "intermediateUpdate", "time": t, "answer": answer, "inside": []}
        requested[0], when[0] = False, t
        if answer[0] == "accept":
            requested[0] = True
        elif answer[0] == "later":
            requested[0], when[0] = True, t + answer[1]
        elif answer[0] == "call":  # a call from inside the callback
            before = len(self.messages)
            status = self.run(answer[1:], inside=True)
            record["inside"] = [answer[1], status, self.messages[before:], self.gave]
        self.callbacks.append(record)

    # ---- calls ----------------------------------------------------------------------------------

    def run(self, call, inside=False):
        """Make one call; returns its status (None for a void function) and what it gave."""
        name, *args = call
        lib, c = self.lib, self.instance
        self.gave = {}
        if name == "doStep":  # at the FMU's time ("now", as the calls so far set it) or off it
            t, h = self.t + (0.5 if args[0] == "off" else 0.0), args[1]
            flags = [C.c_bool(), C.c_bool(), C.c_bool()]
            last = C.c_double(math.nan)
            start = time.process_time()
            status = lib.fmi3DoStep(c, t, h, False, *map(C.byref, flags), C.byref(last))
            if status <= 1 and not inside:
                self.t = last.value
            self.gave = {
                "t": t,
                "h": h,
                "cpu": time.process_time() - start,
                "eventHandlingNeeded": flags[0].value,
                "terminate": flags[1].value,
                "earlyReturn": flags[2].value,
                "lastSuccessfulTime": last.value,
            }
            return status
        if name == "enterInitializationMode":
            status = lib.fmi3EnterInitializationMode(c, False, 0.0, args[0], False, 0.0)
            if status <= 1:
                self.t = args[0]
            return status
        if name in (
            "exitInitializationMode",
            "enterEventMode",
            "enterStepMode",
            "terminate",
            "reset",
        ):
            status = getattr(lib, "fmi3" + name[0].upper() + name[1:])(C.c_void_p(c))
            if name == "reset" and status <= 1:
                self.t = 0.0
            return status
        if name == "updateDiscreteStates":
            flags = [C.c_bool() for _ in range(5)]
            nxt = C.c_double()
            return lib.fmi3UpdateDiscreteStates(C.c_void_p(c), *map(C.byref, flags), C.byref(nxt))
        if name == "set":
            var = self.vars[args[0]]
            kind = {"Float64": C.c_double, "Int32": C.c_int32, "Boolean": C.c_bool}[args[1]]
            vr = (C.c_uint32 * 1)(var.valueReference)
            value = (kind * 1)(args[2])
            return getattr(lib, "fmi3Set" + args[1])(
                C.c_void_p(c), vr, C.c_size_t(1), value, C.c_size_t(1)
            )
        if name == "get":
            return self.get_all()
        if name == "setDebugLogging":
            cats = [x.encode() for x in args[1]]
            arr = (C.c_char_p * max(1, len(cats)))(*cats)
            return lib.fmi3SetDebugLogging(
                C.c_void_p(c), C.c_bool(args[0]), C.c_size_t(len(cats)), arr
            )
        if name == "getFMUState":
            slot = self.states.setdefault(args[0], C.c_void_p())
            status = lib.fmi3GetFMUState(C.c_void_p(c), C.byref(slot))
            if status <= 1:
                self.times[args[0]] = self.t
            return status
        if name == "setFMUState":
            if not self.states.get(args[0]):
                return None
            status = lib.fmi3SetFMUState(C.c_void_p(c), self.states[args[0]])
            if status <= 1:
                self.t = self.times[args[0]]
            return status
        if name == "freeFMUState":
            slot = self.states.setdefault(args[0], C.c_void_p())
            return lib.fmi3FreeFMUState(C.c_void_p(c), C.byref(slot))
        if name == "serialize":
            state = self.states.get(args[0])
            if not state:
                return None
            size = C.c_size_t()
            status = lib.fmi3SerializedFMUStateSize(C.c_void_p(c), state, C.byref(size))
            if status > 1:
                return status
            buf = (C.c_uint8 * size.value)()
            status = lib.fmi3SerializeFMUState(C.c_void_p(c), state, buf, size)
            self.blobs[args[0]] = (bytes(buf), self.times[args[0]])
            return status
        if name == "deserialize":  # args: slot, edit (None or [attribute path, JSON value])
            if args[0] not in self.blobs:
                return None
            data, self.times[args[0]] = self.blobs[args[0]]
            if args[1] is not None:
                data = edited(data, *args[1])
                self.gave = {"edited": data is not None}
                if data is None:
                    return None
            slot = self.states.setdefault(args[0], C.c_void_p())
            buf = (C.c_uint8 * len(data)).from_buffer_copy(data)
            return lib.fmi3DeserializeFMUState(
                C.c_void_p(c), buf, C.c_size_t(len(data)), C.byref(slot)
            )
        if name == "unsupported":
            fn = getattr(lib, args[0])
            vr = (C.c_uint32 * 1)(0)
            values = (C.c_double * 4)()
            return fn(C.c_void_p(c), vr, C.c_size_t(1), values, C.c_size_t(1))
        if name == "freeInstance":
            lib.fmi3FreeInstance(c)
            if not inside:
                self.instance = None
            else:
                self.freed_inside = True
            return None
        raise ValueError(name)

    def get_all(self):
        values = {}
        worst = 0
        for kind, ctype in (("Float64", C.c_double), ("Int32", C.c_int32), ("Boolean", C.c_bool)):
            vs = [v for v in self.outputs if v.type == kind]
            if not vs:
                continue
            vr = (C.c_uint32 * len(vs))(*[v.valueReference for v in vs])
            buf = (ctype * len(vs))()
            fn = getattr(self.lib, "fmi3Get" + kind)
            status = fn(
                C.c_void_p(self.instance), vr, C.c_size_t(len(vs)), buf, C.c_size_t(len(vs))
            )
            worst = max(worst, status)
            for v, x in zip(vs, buf):
                values[v.name] = repr(x) if kind == "Float64" else x
        self.gave = {"values": values}
        return worst

    def plan(self, plan):
        inst = plan["instantiate"]
        self.answers, self.answered, self.callbacks = plan.get("answers") or [], 0, []
        self.freed_inside = False
        self.messages.clear()
        self.t, self.times = 0.0, {}
        self.instance = self.lib.fmi3InstantiateCoSimulation(
            b"seq",
            self.token,
            self.resources.encode(),
            False,
            False,
            inst["eventModeUsed"],
            inst["earlyReturnAllowed"],
            None,
            0,
            None,
            self.log_cb,
            self.update_cb if inst["callback"] else UPDATE(),
        )
        self.emit({"call": "instantiate", "ok": bool(self.instance), "log": self.messages[:]})
        for call in plan["calls"]:
            if not self.instance:
                break
            before = len(self.messages)
            self.callbacks = []
            status = self.run(call)
            self.emit(
                {
                    "call": call,
                    "status": status,
                    "log": self.messages[before:],
                    "callbacks": self.callbacks,
                    **self.gave,
                }
            )
            if self.freed_inside:
                self.instance = None
        if self.instance:
            for slot in list(self.states.values()):
                if slot:
                    self.lib.fmi3FreeFMUState(C.c_void_p(self.instance), C.byref(slot))
            self.lib.fmi3FreeInstance(self.instance)
        self.states.clear()
        self.blobs.clear()
        self.instance = None
        self.emit({"done": True})


def edited(data, path, value):
    """Serialized state bytes with one attribute of its values replaced (path: an attribute name,
    or "name.attr" of an object) and the seal recomputed, as someone who edits them would."""
    import hashlib

    header = b"contactfmu FMU state, SHA-256 "
    payload = data[len(header) + 65 :]
    state = json.loads(payload)
    values = state["values"]
    if path == "model":
        state["model"] = value
    else:
        name, _, attr = path.partition(".")
        if name not in values:
            return None
        if attr:
            obj = values[name]
            if not (isinstance(obj, dict) and attr in obj.get("attrs", {})):
                return None
            obj["attrs"][attr] = value
        else:
            values[name] = value
    payload = json.dumps(state).encode()
    return header + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def main():
    driver = Driver(*sys.argv[1:4])
    for line in sys.stdin:
        driver.plan(json.loads(line))
    sys.stdout.flush()
    os._exit(0)  # no interpreter finalization (see tests/conftest.py)


if __name__ == "__main__":
    main()
