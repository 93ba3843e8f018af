"""The study's table on disk: CSV (rows appended as the runs finish) or Parquet, and its description.

``<name>.csv``: the rows are appended and flushed as runs finish, so an interrupted study keeps every
finished run; at the end the file is rewritten in the order of the runs. ``<name>.parquet`` (needs
pyarrow): the rows go to ``<name>.parquet.partial.csv`` while the study runs and into the Parquet
file at the end. ``<name>.json`` describes the study (model, FMU hashes, stop time, options,
metrics, runs); a resumed study must match it. Numbers are written as their shortest exact
representation (repr) and read back exactly.
"""

import csv
import json
import math
import os
from pathlib import Path

from .runs import StudyError

STRINGS = ("run_id", "status", "error", "worker")  # the text columns (all others are numbers)
FORMATS = (".csv", ".parquet")


def _cell(value):
    if isinstance(value, str):
        return value
    if value is None:
        return "nan"
    return repr(float(value))


class Table:
    """The output file `path` (.csv or .parquet) with the columns `columns`."""

    def __init__(self, path, columns):
        self.path = Path(path)
        if self.path.suffix not in FORMATS:
            raise StudyError(
                f"output file {path}: the table is written as .csv or .parquet, not "
                f"{self.path.suffix or 'a file without suffix'!r}"
            )
        if self.path.suffix == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise StudyError(
                    f"output file {path}: writing Parquet needs pyarrow (python -m pip install "
                    f"pyarrow); or write .csv"
                ) from None
        self.columns = list(columns)
        self.journal = (
            self.path
            if self.path.suffix == ".csv"
            else self.path.with_name(self.path.name + ".partial.csv")
        )
        self.meta = self.path.with_suffix(".json")
        self._fh = None

    @property
    def runs_dir(self):
        """The folder of the runs' trajectories (<name>.runs/<run_id>.csv)."""
        return self.path.with_name(self.path.stem + ".runs")

    # ---- reading -------------------------------------------------------------------------------

    def _read_csv(self, path):
        import pandas as pd

        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        try:
            df = pd.read_csv(
                path,
                keep_default_na=False,
                na_values=["nan"],
                dtype={c: str for c in STRINGS},
                **exact,
            )  # pandas 3 reads floats exactly by default (and deprecates the option)
        except pd.errors.EmptyDataError:
            return None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise StudyError(f"{path}: not a study table: {exc}") from None
        return df

    def read(self):
        """The rows already in the output (Parquet file and journal, or the CSV file): a DataFrame, or
        None if there are none."""
        import pandas as pd

        parts = []
        if self.path.suffix == ".parquet" and self.path.is_file():
            parts.append(pd.read_parquet(self.path))
        if self.journal.is_file():
            df = self._read_csv(self.journal)
            if df is not None:
                parts.append(df)
        parts = [p for p in parts if len(p.columns)]
        if not parts:
            return None
        for p, source in zip(parts, (self.path, self.journal)):
            if list(p.columns) != self.columns:
                raise StudyError(
                    f"{source} holds a table with other columns ({', '.join(map(str, p.columns))}) "
                    f"than this study ({', '.join(self.columns)}): write to another file or start "
                    f"afresh (resume=False, --fresh)"
                )
        df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        for c in STRINGS:
            df[c] = df[c].fillna("").astype(str)
        return df.drop_duplicates("run_id", keep="last")

    def read_meta(self):
        if not self.meta.is_file():
            return None
        try:
            return json.loads(self.meta.read_text())
        except (OSError, ValueError) as exc:
            raise StudyError(f"{self.meta}: unreadable study description: {exc}") from None

    # ---- writing -------------------------------------------------------------------------------

    def start(self, meta, rows):
        """Write the description and start the journal with the rows kept (a list of dicts)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.meta.write_text(json.dumps(meta, indent=1) + "\n")
        if self.path.suffix == ".parquet" and self.path.exists() and not rows:
            self.path.unlink()
        self._write(self.journal, rows)
        self._fh = open(self.journal, "a", newline="")
        self._writer = csv.writer(self._fh)

    def append(self, row):
        self._writer.writerow([_cell(row.get(c, math.nan)) for c in self.columns])
        self._fh.flush()

    def _write(self, path, rows):
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(self.columns)
            for row in rows:
                w.writerow([_cell(row.get(c, math.nan)) for c in self.columns])
        os.replace(tmp, path)

    def finish(self, rows, frame):
        """The final file: `rows` in run order (CSV), or the DataFrame `frame` as Parquet."""
        self.close()
        if self.path.suffix == ".csv":
            self._write(self.path, rows)
        else:
            tmp = self.path.with_name(self.path.name + ".tmp")
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, self.path)
            self.journal.unlink(missing_ok=True)

    def close(self):
        if self._fh is not None:
            self._fh.close()
            self._fh = None
