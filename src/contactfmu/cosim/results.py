"""Results: a time column and named signals, as a numpy structured array and as CSV in the
FMI cross-check format (first column "time", quoted names, one row per time point; duplicated
time stamps mark events)."""
import csv

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
        self.data = np.rec.fromarrays(values.T, dtype=[(n, "f8") for n in names]) if len(values) else \
            np.zeros(0, dtype=[(n, "f8") for n in names])

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
        return Result(["time"] + [rename.get(n, n) for n in names],
                      np.column_stack([self.values[:, 0]] + [self.values[:, c] for c in cols]))

    def to_csv(self, path):
        with open(path, "w", newline="") as fh:
            fh.write(",".join(f'"{n}"' for n in self.names) + "\n")
            for row in self.values:
                fh.write(",".join(repr(float(x)) for x in row) + "\n")
        return path


def read_csv(path):
    """Read a cross-check / Dymola reference CSV (quoted header, numeric rows) into a Result."""
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader)]
        rows = [[float(x) for x in row] for row in reader if row]
    if header[0].lower() != "time":
        raise ValueError(f"{path}: first column is {header[0]!r}, expected 'time'")
    header[0] = "time"
    return Result(header, np.array(rows, dtype=float).reshape(len(rows), len(header)))
