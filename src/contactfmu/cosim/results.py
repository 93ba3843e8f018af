"""Results: a time column and named signals, as a numpy structured array and as CSV in the
FMI cross-check format (first column "time", quoted names, one row per time point; duplicated
time stamps mark events)."""

import csv
import math

import numpy as np


class Result:
    """Recorded signals. ``result["mass.s"]`` is a column; ``result.data`` a structured array."""

    def __init__(self, names, values):
        values = np.asarray(values, dtype=float)
        if values.ndim != 2 or values.shape[1] != len(names):
            raise ValueError(f"{len(names)} names for data of shape {values.shape}")
        if names[0] != "time":
            raise ValueError("the first column must be 'time'")
        self.names = list(names)
        self.values = values
        # adaptive runs: every attempted step (cosim.algorithms.adaptive.StepRecord)
        self.steps = None
        # dense output: per row, whether it was interpolated between communication points (None:
        # every row was read at a communication point; cosim.observers.Recorder)
        self.interpolated = None
        # simulate(error_estimate=True): {column: estimated largest error} (estimate_error)
        self.error_estimate = None
        self.data = (
            np.rec.fromarrays(values.T, dtype=[(n, "f8") for n in names])
            if len(values)
            else np.zeros(0, dtype=[(n, "f8") for n in names])
        )

    def __getitem__(self, name):
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self.names)}") from None

    def __contains__(self, name):
        return name in self.names

    @property
    def time(self):
        return self.values[:, 0]

    def select(self, names, rename=None):
        """A Result with the columns `names` (after time), optionally renamed."""
        rename = rename or {}
        cols = [self.names.index(n) for n in names]
        return Result(
            ["time"] + [rename.get(n, n) for n in names],
            np.column_stack([self.values[:, 0]] + [self.values[:, c] for c in cols]),
        )

    def to_csv(self, path):
        """Write the cross-check CSV to `path` (its folder is created if missing); returns path."""
        from pathlib import Path

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as fh:
            fh.write(",".join(f'"{n}"' for n in self.names) + "\n")
            for row in self.values:
                fh.write(",".join(repr(float(x)) for x in row) + "\n")
        return path


def estimate_error(coarse, fine, ratio):
    """The largest error of each column of `coarse` (a Result), estimated from `fine`, the same run
    at a tolerance `ratio` times tighter: where the error is proportional to the tolerance, coarse
    is off by e and fine by e/ratio, so |coarse - fine| is about e*(1 - 1/ratio). ``fine`` is
    interpolated (linearly) onto coarse's times where they differ. {column: estimated max |error|}."""
    same = len(fine.time) == len(coarse.time) and np.array_equal(fine.time, coarse.time)
    out = {}
    for name in coarse.names[1:]:
        other = fine[name] if same else np.interp(coarse.time, fine.time, fine[name])
        out[name] = float(np.max(np.abs(coarse[name] - other))) / (1.0 - 1.0 / ratio)
    return out


class CsvError(ValueError):
    """A file that is not a result CSV: ``reason`` says why (with the line number where there is
    one); ``str()`` is ``"<path>: <reason>"``."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def read_csv(path, finite=False):
    """Read a cross-check / Dymola reference CSV (quoted header, numeric rows) into a Result.
    CsvError (a ValueError) if the file is empty, has no data rows, does not start with a "time"
    column, or has a row of the wrong length or a non-numeric cell (with its line number);
    with ``finite=True`` also for a NaN or infinite cell."""
    rows = []
    try:
        with open(path, newline="") as fh:
            reader = csv.reader(fh)
            header = [h.strip() for h in next(reader, [])]
            if not header:
                raise CsvError(
                    path,
                    "empty file"
                    if reader.line_num == 0
                    else 'line 1 is empty (expected a header line starting with "time")',
                )
            if header[0].lower() != "time":
                raise CsvError(path, f"first column is {header[0]!r}, expected 'time'")
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise CsvError(
                        path,
                        f"line {reader.line_num}: {len(row)} values, the header has "
                        f"{len(header)} columns",
                    )
                try:
                    values = [float(x) for x in row]
                except ValueError:
                    values = None
                if values is None or finite and not all(map(math.isfinite, values)):
                    k = next(k for k, x in enumerate(row) if not _is_number(x, finite))
                    raise CsvError(
                        path,
                        f"line {reader.line_num}, column {header[k]!r}: {row[k].strip()!r} is "
                        f"{'not finite' if _is_number(row[k], False) else 'not a number'}",
                    )
                rows.append(values)
    except UnicodeDecodeError:
        raise CsvError(path, "not a text file") from None
    except csv.Error as exc:
        raise CsvError(path, f"line {reader.line_num}: {exc}") from None
    if not rows:
        raise CsvError(path, "no data rows (only a header line)")
    header[0] = "time"
    return Result(header, np.array(rows, dtype=float))


def _is_number(text, finite):
    try:
        return math.isfinite(float(text)) or not finite
    except ValueError:
        return False
