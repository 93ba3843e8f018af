"""What the commands share: the error of bad input and the check that a path is an FMU."""

import zipfile
from pathlib import Path


class CliError(Exception):
    """Bad input: reported as 'contactfmu: error: ...' with exit status 2."""


def read_fmu(path):
    """Model description of the FMU at `path`, or a CliError saying what is wrong."""
    from fmpy import read_model_description

    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    if p.is_dir() or not zipfile.is_zipfile(p):
        raise CliError(f"{path}: not an FMU (an FMU is a zip archive with a modelDescription.xml)")
    with zipfile.ZipFile(p) as z:
        if "modelDescription.xml" not in z.namelist():
            raise CliError(f"{path}: not an FMU (no modelDescription.xml in the archive)")
    try:
        return read_model_description(str(p))
    except Exception as exc:
        raise CliError(f"{path}: unreadable modelDescription.xml: {exc}") from None
