"""The one run loop of the master (as libcosim's ``execution``), for every algorithm, fixed-step or
adaptive: the manipulators (driven inputs), the algorithm (cosim.algorithms) and the observers
(recorder, progress) of one run of a System.

:meth:`Execution.run`: the algorithm checks the experiment and gives the recording times; the FMUs
are instantiated and initialized around the algorithm's ``initialize``; then, until the last recording
time (or the stop time), the algorithm takes a step of its choice, never past the next recording
time (a ``dense`` algorithm: never past the end, the recorder interpolating the recording times
between its communication points), and the observers are told of it; the FMUs are terminated and
freed. A run that fails once stepping has begun raises its CosimError with the results
recorded up to the last communication point as the exception's ``result``.
"""

from .algorithms import Run
from .errors import CosimError
from .manipulators import DrivenInputs
from .observers import ProgressBar, ProgressFunction, Recorder
from .results import Result


class Execution:
    """One run of `system` by `algorithm` (a cosim.algorithms object); inputs, outputs, progress as
    System.simulate takes them."""

    def __init__(self, system, algorithm, inputs=None, outputs=None, progress=None):
        self.system, self.algorithm = system, algorithm
        self.inputs, self.outputs, self.progress = inputs, outputs, progress

    def run(self, start_time, stop_time, output_interval=None):
        """Simulate from start_time to stop_time; the Result (with ``steps``: the algorithm's records)."""
        system, algorithm = self.system, self.algorithm
        if not stop_time > start_time:
            raise CosimError(
                f"stop_time {stop_time!r} must be greater than start_time {start_time!r}"
            )
        times = algorithm.setup(system, start_time, stop_time, output_interval)
        plan = system.plan(derivatives=algorithm.derivatives)
        drive = DrivenInputs(system, self.inputs, plan)
        dense = times is not None and algorithm.dense
        recorder = Recorder(system, self.outputs, grid=[start_time, *times] if dense else None)
        observers = [recorder]
        if self.progress is True:
            observers.append(ProgressBar(start_time, stop_time))
        elif self.progress:
            observers.append(ProgressFunction(self.progress))
        try:
            system.instantiate(start_time, stop_time, algorithm.early_return)
            drive(start_time)
            system.enter_initialization(start_time)
            algorithm.initialize(Run(system, plan, drive, recorder.wanted()))
            system.exit_initialization(start_time)
            recorder.bind(algorithm.observed)  # (what the algorithm reads anyway: no call)
            algorithm.start(start_time)
            for observer in observers:
                observer.initialized(start_time)
            end = times[-1] if times else stop_time
            t, k = start_time, 0
            try:
                while t < end:
                    limit = end if dense or not times else times[k]
                    t = algorithm.do_step(t, limit)
                    record = times is None or dense or t >= limit
                    if times and record and not dense:
                        k += 1
                    for observer in observers:
                        observer.step_complete(t, record)
            except CosimError as exc:
                # what the run has: the recorded rows up to the last communication point
                exc.result = self._result(recorder)
                head, log = (str(exc.args[0]).split("\nFMU log:\n", 1) + [None])[:2]
                note = (
                    f"the run stopped after t = {t:.9g} s: the results up to there are the "
                    "exception's .result"
                )
                exc.args = (f"{head}\n{note}" + ("" if log is None else f"\nFMU log:\n{log}"),)
                raise
            system.terminate(t)
        finally:
            for observer in observers:
                observer.finished()
            system.free()
        return self._result(recorder)

    def _result(self, recorder):
        result = Result(["time"] + recorder.names, recorder.table())
        result.interpolated = recorder.interpolated()
        result.steps = self.algorithm.records
        return result
