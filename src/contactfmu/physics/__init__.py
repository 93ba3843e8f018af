"""Component physics: parameters, equations and hybrid modes. No FMI, standard library only
(this package is bundled into the FMUs)."""
