"""The master's FMI 3.0 face of an FMU: an FMI 3.0 co-simulation FMU (fmpy's FMU3Slave) behind
the FMI 2.0 calls the master makes (fmpy's FMU2Slave methods, and the ctypes functions
``_functions[<fmi2 name>]`` that fastcalls binds), so that the master's layers serve both
standards and one system mixes them.

- fmi2GetReal/SetReal, Integer: fmi3GetFloat64/SetFloat64, Int32 (the value count passed
  twice); Boolean through a buffer of fmi3Boolean (one byte; an fmi2Boolean has four).
- fmi2DoStep: fmi3DoStep, its flags kept: ``last_step`` is (eventHandlingNeeded, earlyReturn,
  lastSuccessfulTime) of the last step. Early return is allowed where the master asks for it
  (``early_return``, at instantiation): an algorithm that reads the returned event time.
- FMU states: the fmi3 functions have the fmi2 signatures.
- setupExperiment: kept for fmi3EnterInitializationMode, which takes the start and stop time.
- Messages: each instance's to its own log (``log``), as (status, message).

FMI 3.0 co-simulation has no input derivatives and the FMUs declare no output derivatives, so
the master's derivative calls are never made for an FMI 3.0 FMU (Instance.derivatives,
interpolates). Generic: names no component and no physical domain."""

from ctypes import byref, c_bool, c_double

from ..fmi import terminals

TYPES = {"Float64": "Real", "Int32": "Integer"}  # FMI 3.0 variable types as the master names them


def terminal_members(path):
    """{terminal name: {memberName: variableName}} of the FMU's terminalsAndIcons.xml (FMI 3.0
    "Terminals and Icons"); {} if it has none."""
    import zipfile
    from xml.etree.ElementTree import fromstring

    with zipfile.ZipFile(path) as archive:
        if terminals.PATH not in archive.namelist():
            return {}
        return terminals.members(fromstring(archive.read(terminals.PATH)))


def normalize(model_description):
    """Name the variable types of an FMI 3.0 model description as FMI 2.0 does (Real, Integer,
    Boolean) in place: the master's plans read `type`."""
    for var in model_description.modelVariables:
        var.type = TYPES.get(var.type, var.type)


class Fmi3Slave:
    """An FMU3Slave with the FMU2Slave calls of the master."""

    def __init__(self, guid, unzipDirectory, modelIdentifier, instanceName, log, early_return):
        from fmpy.fmi3 import FMU3Slave

        self.fmu = FMU3Slave(
            guid=guid,
            unzipDirectory=unzipDirectory,
            modelIdentifier=modelIdentifier,
            instanceName=instanceName,
        )
        self.log, self.early_return = log, early_return
        self.start = self.stop = None
        self.last_step = (False, False, None)
        self.component = None
        self._functions = {}

    def instantiate(self, callbacks=None, loggingOn=False):
        log = self.log

        def message(env, status, category, text):
            log.append((status, text.decode("utf-8", "replace") if text else ""))

        self.fmu.instantiate(
            loggingOn=loggingOn, earlyReturnAllowed=self.early_return, logMessage=message
        )
        self.component = self.fmu.component
        self._functions = self._bind(self.fmu.dll)

    def _bind(self, dll):
        """The fmi2 functions the master binds, as functions of the fmi3 ones (same arguments)."""
        get64, set64 = dll.fmi3GetFloat64, dll.fmi3SetFloat64
        get32, set32 = dll.fmi3GetInt32, dll.fmi3SetInt32
        getb, setb = dll.fmi3GetBoolean, dll.fmi3SetBoolean
        step = dll.fmi3DoStep

        def get_boolean(c, vr, n, buf):
            values = (c_bool * n)()
            status = getb(c, vr, n, values, n)
            for i in range(n):
                buf[i] = values[i]
            return status

        def set_boolean(c, vr, n, buf):
            return setb(c, vr, n, (c_bool * n)(*(bool(buf[i]) for i in range(n))), n)

        event, terminate, early, last = c_bool(), c_bool(), c_bool(), c_double()

        def do_step(c, t, h, no_set_prior):
            status = step(
                c, t, h, no_set_prior, byref(event), byref(terminate), byref(early), byref(last)
            )
            self.last_step = (event.value, early.value, last.value)
            return status

        return {
            "fmi2GetReal": lambda c, vr, n, buf: get64(c, vr, n, buf, n),
            "fmi2SetReal": lambda c, vr, n, buf: set64(c, vr, n, buf, n),
            "fmi2GetInteger": lambda c, vr, n, buf: get32(c, vr, n, buf, n),
            "fmi2SetInteger": lambda c, vr, n, buf: set32(c, vr, n, buf, n),
            "fmi2GetBoolean": get_boolean,
            "fmi2SetBoolean": set_boolean,
            "fmi2DoStep": do_step,
            "fmi2GetFMUstate": dll.fmi3GetFMUState,
            "fmi2SetFMUstate": dll.fmi3SetFMUState,
            "fmi2FreeFMUstate": dll.fmi3FreeFMUState,
        }

    def setupExperiment(self, startTime=0.0, stopTime=None, tolerance=None):
        self.start, self.stop = startTime, stopTime

    def enterInitializationMode(self):
        self.fmu.enterInitializationMode(startTime=self.start or 0.0, stopTime=self.stop)

    def exitInitializationMode(self):
        self.fmu.exitInitializationMode()

    def getReal(self, vr):
        return self.fmu.getFloat64(vr)

    def setReal(self, vr, values):
        self.fmu.setFloat64(vr, values)

    def getInteger(self, vr):
        return self.fmu.getInt32(vr)

    def setInteger(self, vr, values):
        self.fmu.setInt32(vr, values)

    def getBoolean(self, vr):
        return self.fmu.getBoolean(vr)

    def setBoolean(self, vr, values):
        self.fmu.setBoolean(vr, values)

    def doStep(self, t, h, noSetFMUStatePriorToCurrentPoint=True):
        event, _, early, last = self.fmu.doStep(t, h, noSetFMUStatePriorToCurrentPoint)
        self.last_step = (event, early, last)

    def terminate(self):
        self.fmu.terminate()

    def freeInstance(self):
        self.fmu.freeInstance()
