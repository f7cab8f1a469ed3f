"""The package's exceptions, in one module that imports nothing from the package.

Every layer raises from here (configuration, solvers, multibody, files), so no module has to
import a higher one for its error type. The modules that used to define them re-export them
(``ancf_beam.config.ConfigError is ancf_beam.errors.ConfigError``).

Bad input (:class:`ConfigError`, :class:`SettingsError`, :class:`InputFileError`) exits the
CLI with status 2; solver failures (:class:`ConvergenceError`, :class:`InstabilityError`,
:class:`ConstraintSingularityError`, ...) with status 1.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ConstraintSingularityError",
    "ContactOverlapError",
    "ConvergenceError",
    "InputFileError",
    "InstabilityError",
    "NewtonConvergenceError",
    "NonFiniteResultError",
    "OutputFileError",
    "RedundantConstraintError",
    "SettingsError",
    "StaticSolutionError",
]


# ------------------------------------------------------------------------------------------
# input: configuration and run settings
# ------------------------------------------------------------------------------------------
class ConfigError(ValueError):
    """A configuration key or value is invalid; the message names key, value and allowed range."""


class SettingsError(ValueError):
    """An invalid dynamics setting. ``options`` are the settings the message is about; the CLI
    re-renders the message with its flag names (:meth:`render`)."""

    def __init__(self, options: tuple[str, ...], template: str):
        self.options = options
        self.template = template  # "{0}", "{1}", ...: the option names
        super().__init__(self.render())

    def render(self, name=lambda option: option) -> str:
        """The message with every option spelled ``name(option)``."""
        return self.template.format(*(name(o) for o in self.options))


# ------------------------------------------------------------------------------------------
# solvers
# ------------------------------------------------------------------------------------------
class ConvergenceError(RuntimeError):
    """A Newton iteration did not converge; the message says where and how far it got."""


class StaticSolutionError(ConvergenceError):
    """A converged static state that is not an answer: an unstable equilibrium (the tangent
    stiffness is not positive definite on the free DOFs) or one whose strains the mesh does not
    resolve; the message says which and what to change."""


class NewtonConvergenceError(ConvergenceError):
    """Newton's method failed in an implicit time step (attributes name where and how far)."""

    def __init__(
        self,
        message: str,
        *,
        t: float,
        step: int,
        dt: float,
        iterations: int,
        residual: float,
        tolerance: float,
    ):
        super().__init__(message)
        self.t = t
        self.step = step
        self.dt = dt
        self.iterations = iterations
        self.residual = residual
        self.tolerance = tolerance


class InstabilityError(RuntimeError):
    """The explicit run became unstable; the message names step, time, dt and dt_critical."""


class NonFiniteResultError(RuntimeError):
    """A result holds NaN or an infinity; the message names the quantity (nothing is written)."""


# ------------------------------------------------------------------------------------------
# planar multibody (ancf_beam.mbs)
# ------------------------------------------------------------------------------------------
class RedundantConstraintError(ValueError):
    """The constraint Jacobian of a multibody system is rank deficient; ``rows`` names the
    dependent equations (``joint.equation``) and ``joints`` their joints."""

    def __init__(self, message: str, *, rows: list[str], joints: list[str]):
        super().__init__(message)
        self.rows = rows
        self.joints = joints


class ConstraintSingularityError(RuntimeError):
    """The constraint Jacobian became singular during a run (a kinematic singularity, e.g. a
    slider-crank whose rod is shorter than its crank reaching a dead point)."""


class ContactOverlapError(RuntimeError):
    """Two discs of a circle contact overlap deeper than its geometry describes (half the sum
    of their radii: the centres meet soon after and the bodies would pass through each other);
    the message names the contact, the time, the overlap and the admissible depth."""


# ------------------------------------------------------------------------------------------
# files
# ------------------------------------------------------------------------------------------
class InputFileError(OSError):
    """An input NetCDF file is missing, truncated or not NetCDF; the message names the file."""


class OutputFileError(OSError):
    """A result file could not be written; the message names the file and, when its file system
    is full, says so (netCDF/HDF5 report a full disk as ``HDF error`` or even ``Permission
    denied``)."""
