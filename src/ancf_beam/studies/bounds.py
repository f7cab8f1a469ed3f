"""Error bounds behind the tolerances of the validation checks.

A check compares a computed value with a reference computed another way; its tolerance is the
sum of the error bounds of both, each with its source (:class:`Bound` keeps the terms and
writes them into the check's note):

* **discretisation** -- an error estimate from refinement: the ANCF quantity on ``n`` and
  ``4 n`` elements (:func:`refinement_estimate`), the stepped transfer-matrix beam on ``N``,
  ``2N`` and ``4N`` segments (:func:`stepped_richardson`), the elastica at two solver
  tolerances, the explicit run at ``dt`` and ``dt / 2``; multiplied by a factor of safety
  (``pipeline.validation.tolerances.estimate_factor``) that covers a second error term of the
  opposite sign before the asymptotic range;
* **the time integrator's order with its constant** -- the energy error of the central
  differences on the linearised beam (:func:`central_difference_energy_bound`);
* **round-off** -- a few ``eps`` times a condition estimate: the first-order error of a
  Newton solution from its residual and the residual's round-off (:func:`static_solution_error`,
  the adjoint of the checked quantity), the Ritz eigenvalues (:func:`modal_roundoff`), the
  transfer-matrix products (:func:`stepped_roundoff`).

Every bound holds for the documented input ranges; where a quantity cannot be resolved (a
stepped beam whose observed order cannot settle on the segments used), the bound says so by
its size, and the note names the term that dominates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ancf_beam.specs import CaseSpec

__all__ = [
    "EPS",
    "QUADRATURE_REL",
    "Bound",
    "central_difference_energy_bound",
    "clamp_exponent",
    "geometric_nonlinearity",
    "log_ratio",
    "modal_roundoff",
    "profile_breaks",
    "refinement_estimate",
    "residual_roundoff_samples",
    "static_solution_error",
    "stepped_exponents",
    "stepped_richardson",
    "stepped_roundoff",
    "tip_gradients",
]

EPS = float(np.finfo(float).eps)

#: Relative accuracy of the exact graded quadrature (``transfer.exact_graded_static``): the
#: adaptive end-panel quadratures run at ``epsrel = 1e-12``; the 20-point Gauss-Legendre
#: interior panels are exact to round-off for profiles smooth inside ``(0, L)``.
QUADRATURE_REL = 1.0e-12
#: Relative round-off per transfer-matrix product of the stepped beam (a few eps).
STEPPED_ROUNDOFF_PER_SEGMENT = 4.0 * EPS


@dataclass
class Bound:
    """A tolerance as a sum of error bounds with their sources (same units as the check's
    error: relative for ``mode='rel'`` checks, absolute otherwise)."""

    terms: list[tuple[str, float]] = field(default_factory=list)

    def add(self, source: str, value: float) -> Bound:
        self.terms.append((source, abs(float(value))))
        return self

    @property
    def total(self) -> float:
        return float(sum(v for _, v in self.terms))

    def note(self) -> str:
        """``tol = a (source) + b (source) ...``, largest term first."""
        terms = sorted((t for t in self.terms if t[1] > 0.0), key=lambda t: -t[1]) or [
            ("zero", 0.0)
        ]
        return "tol = " + " + ".join(f"{v:.2g} ({s})" for s, v in terms)


# --------------------------------------------------------------------------------------------
# discretisation estimates
# --------------------------------------------------------------------------------------------
def refinement_estimate(f_n, f_2n, f_4n):
    """Error estimate of ``f_n`` from the same quantity on meshes two and four times finer
    (scalars or arrays): ``max(2 |f_n - f_2n|, 4/3 |f_n - f_4n|)``.

    ``|f_n - f| <= |f_n - f_2n| + |f_2n - f|``, so once the error at least halves per halving
    of the element (every order ``p >= 1``), ``|f_n - f| <= 2 |f_n - f_2n|``; likewise
    ``<= 4/3 |f_n - f_4n|`` once it at least quarters over two halvings. Before the asymptotic
    range two terms of opposite signs can make the error of one mesh small by cancellation
    and the next one larger (2 Gauss points and ``x^0.9`` on 4, 8, 16 elements: 1.2e-6,
    2.3e-6, 0.8e-6); the larger of the two estimates then still covers it, and the factor of
    safety the rest.

    Every ANCF quantity of the documented cases converges at least at order 1 in ``1 / n``:
    4 for smooth profiles (cubic Hermite), ``1 + n`` for a power law ``x^n`` with ``n < 1``
    (its Gauss integration on the clamp element), 2 for the ``element`` and ``nodal``
    mappings (piecewise constant / linear properties) and 3 for a table breakpoint inside
    an element."""
    f_n, f_2n, f_4n = (np.asarray(v, float) for v in (f_n, f_2n, f_4n))
    out = np.maximum(2.0 * np.abs(f_n - f_2n), 4.0 / 3.0 * np.abs(f_n - f_4n))
    return float(out) if out.ndim == 0 else out


def stepped_exponents(case: CaseSpec, upto: float = 4.0) -> list[float]:
    """The exponents ``p <= upto`` of the error expansion ``sum c_p (L / N)^p`` of the stepped
    (midpoint-property) beam of ``case``, ascending.

    A stepped beam integrates ``1 / EI`` and the load like the midpoint rule. For properties
    smooth on ``[0, L]`` its error expands in even powers ``2, 4, 6, ...``; a power law
    ``(x/L)^a`` with ``a`` not an integer adds ``a + 1, a + 2, ...`` (the generalised
    Euler-Maclaurin expansion of an end-point singularity), and the exponents ``a`` present
    in ``EI`` and ``q`` are the sums of the families' ``n`` (products and powers of the
    factors ``1 - lam (x/L)^n``). Table profiles are piecewise linear; with their breakpoints
    on segment boundaries (:func:`ancf_beam.references.transfer.segment_nodes`) every piece
    keeps the even expansion."""
    d = case.defect
    ns = sorted({float(g.n) for g in (d.E, d.rho, d.width, d.height) if g.lam != 0.0})
    out = {2.0 * k for k in range(1, int(upto // 2) + 1)}
    sums: set[float] = set()
    for combo in itertools.product(*[range(0, int(upto / n) + 1) for n in ns]):
        a = sum(k * n for k, n in zip(combo, ns, strict=True))
        if 0.0 < a < upto and not _is_integer(a):
            sums.add(a)
    for a in sums:
        out.update(round(a + 1.0 + j, 12) for j in range(int(upto)) if a + 1.0 + j <= upto)
    return sorted(out)


def clamp_exponent(case: CaseSpec) -> float | None:
    """The smallest non-integer power ``n`` of the case's power laws (None if every active
    law has an integer ``n``): the properties' derivatives are singular at the clamp."""
    d = case.defect
    ns = [
        float(g.n)
        for g in (d.E, d.rho, d.width, d.height)
        if g.lam != 0.0 and not _is_integer(float(g.n))
    ]
    return min(ns) if ns else None


def _is_integer(a: float) -> bool:
    return abs(a - round(a)) <= 1e-9 * max(1.0, abs(a))


def stepped_richardson(values: Sequence[float], order: float) -> np.ndarray:
    """Richardson extrapolations of the stepped values on ``N, 2N, 4N, ...`` segments with the
    leading ``order``: ``f_2 + (f_2 - f_1) / (2^p - 1)`` for every consecutive pair."""
    v = np.asarray(values, float)
    return v[1:] + (v[1:] - v[:-1]) / (2.0**order - 1.0)


def stepped_roundoff(n_segments: int) -> float:
    """Relative round-off of a product of ``n_segments`` transfer matrices (and of the 2x2
    clamp solve): a few eps per product."""
    return STEPPED_ROUNDOFF_PER_SEGMENT * float(n_segments)


# --------------------------------------------------------------------------------------------
# solver and round-off bounds
# --------------------------------------------------------------------------------------------
def static_solution_error(model, q: np.ndarray, gradients: Iterable[np.ndarray]) -> list[float]:
    """Bounds of the error of quantities ``Q(q)`` of a converged static solution ``q`` of
    ``model``, one per gradient ``dQ/dq`` (free DOFs): the Newton error and the round-off.

    To first order the exact solution is ``q + K^-1 R(q)`` (``R`` the out-of-balance force
    on the free DOFs, ``K`` the tangent), so ``Q`` errs by ``z . R`` with the adjoint
    ``z = K^-1 dQ/dq`` (``K`` symmetric). The computed ``R`` carries round-off ``dR``, which
    Newton cannot remove (it stops where the computed ``R`` vanishes): ``Q`` errs by ``z . dR``
    more. ``dR`` is sampled at ``q`` itself as the change of the elastic force under three rigid
    translations of ``q`` (zero without round-off; :func:`residual_roundoff_samples`) and its
    effect bounded by :data:`ROUNDOFF_SAMPLES_FACTOR` (16) times the largest sampled ``|z . dR|``;
    the load carries a few eps:
    ``|dQ| <= 2 |z . R| + 16 max |z . dR_j| + 4 eps |z| . |Q_g|`` (the factors:
    :data:`NEWTON_ESTIMATE_FACTOR`, :data:`ROUNDOFF_SAMPLES_FACTOR`).

    (A worst-case sum ``|z| . |dR|`` would grow like ``n^4``, 1e-5 of the tip at 80 elements,
    while the round-off sits in short waves that the smooth adjoint of a tip quantity does not
    see: the sampled projections are 1e-16 to 1e-13 of the tip up to 320 elements.)"""
    r = model.residual_free(q)
    samples = residual_roundoff_samples(model, q)
    load = 4.0 * EPS * np.abs(model.gravity_free)
    out = []
    for g in gradients:
        z = model.tangent_solve(q, np.asarray(g, float))
        sampled = max(abs(float(z @ d)) for d in samples)
        newton = NEWTON_ESTIMATE_FACTOR * abs(float(z @ r))
        out.append(newton + ROUNDOFF_SAMPLES_FACTOR * sampled + float(np.abs(z) @ load))
    return out


#: Factor on the first-order Newton error ``z . R``: an estimate, exact but for its
#: second-order remainder (where it dominates, as in a nodally exact comparison stopped at
#: ``static.rtol``, the error equals it to 1 %).
NEWTON_ESTIMATE_FACTOR = 2.0
#: Factor on the largest of three sampled round-off effects (samples of a quantity whose size,
#: not its sign or phase, is what they measure; the property-based sweep saw an error at 0.25 of
#: 16 x the largest sample).
ROUNDOFF_SAMPLES_FACTOR = 16.0


def residual_roundoff_samples(model, q: np.ndarray) -> list[np.ndarray]:
    """Three samples of the elastic force's round-off at ``q`` (free DOFs, N): its change
    under rigid translations of ``q`` by irrational fractions of ``L`` (exactly zero without
    round-off)."""
    from ancf_beam.beam.model import CLAMP

    q = np.asarray(q, float)
    f0 = model.elastic_force(q)[CLAMP:]
    L = model.length
    out = []
    for ax, ay in (
        (0.3183098861837907, -0.2718281828459045),
        (-0.1414213562373095, 0.5772156649),
        (0.6931471805599453, 0.1732050807568877),
    ):
        shifted = q.copy()
        shifted[0::4] += ax * L
        shifted[1::4] += ay * L
        out.append(model.elastic_force(shifted)[CLAMP:] - f0)
    return out


def tip_gradients(model, q: np.ndarray) -> dict[str, np.ndarray]:
    """Gradients (free DOFs) of the tip quantities: ``tip_x``, ``tip_y``, ``tip_angle``
    (rad, ``atan2(y', x')``) and ``tip_slope`` (``y' / x'``, the linear model's slope)."""
    nf = model.n_free
    xs, ys = float(q[-2]), float(q[-1])
    out = {k: np.zeros(nf) for k in ("tip_x", "tip_y", "tip_angle", "tip_slope")}
    out["tip_x"][nf - 4] = 1.0
    out["tip_y"][nf - 3] = 1.0
    g2 = xs * xs + ys * ys
    out["tip_angle"][nf - 2] = -ys / g2
    out["tip_angle"][nf - 1] = xs / g2
    out["tip_slope"][nf - 2] = -ys / (xs * xs)
    out["tip_slope"][nf - 1] = 1.0 / xs
    return out


def modal_roundoff(n_elements: int) -> float:
    """Relative round-off of the Ritz frequencies of :func:`ancf_beam.solvers.modal.
    modal_analysis`: the projected stiffness is evaluated in energy form from curvatures of
    nodal values, whose round-off relative to the curvature is ``eps (L / l_e)^2``; the
    subspace from shift-invert Lanczos adds what its start vector leaves. Bound ``32 eps n^2``:
    measured ``0.2 eps n^2`` on the seed beam (2e-11 at 2000 elements, 4e-8 at 10000) and up
    to ``14 eps n^2`` for the graded beam about its static state (x-y coupled; 7.6e-8 at 5000
    elements over nine Lanczos start vectors)."""
    return 32.0 * EPS * max(1, int(n_elements)) ** 2


def central_difference_energy_bound(model, dt: float) -> float:
    """Largest ``|E_n - E_0|`` (J) of the central-difference run of the linearised beam released
    from rest under gravity, with the energy from the central velocity (order and constant
    of the scheme).

    Mode ``k`` (frequency ``w_k``, energy ``E_k``) moves as a discrete cosine; with the central
    velocity its energy is ``E_k (1 - (w_k dt / 2)^2 sin^2(w~_k t_n))``, so
    ``|E_n - E_0| <= sum_k E_k (w_k dt)^2 / 4``. Released from rest under the load ``f``,
    ``E_k = (phi_k . f)^2 / (2 w_k^2)`` (``phi`` mass-normalised), and the sum is
    ``dt^2 / 8 sum_k (phi_k . f)^2 = dt^2 / 8 f^T M^-1 f``, whatever the stiffness."""
    from scipy.linalg import solveh_banded

    f = model.gravity_free
    x = solveh_banded(model.mass_free_lower_band, f, lower=True)
    return float(dt) ** 2 / 8.0 * float(f @ x)


def geometric_nonlinearity(model, tip_static: float) -> float:
    """Estimate (m) of the geometric nonlinearity of a run released from rest under gravity
    with small deflection: ``8 |tip - tip_linearised|``, the static tip's nonlinear part (the
    nonlinear equilibrium against one linear solve about the stress-free reference),
    at the run's largest displacement, twice the static one, scaled with the cube of the
    displacement (the nonlinear part grows as the square of the relative displacement)."""
    ref = model.reference()
    u = model.tangent_solve(ref, model.gravity_free)
    return 8.0 * abs(float(tip_static) - (float(ref[-3]) + float(u[-3])))


def log_ratio(a: float, b: float) -> float:
    """``log2(|a / b|)`` (NaN when either vanishes)."""
    if a == 0.0 or b == 0.0 or not (math.isfinite(a) and math.isfinite(b)):
        return math.nan
    return math.log2(abs(a / b))


def profile_breaks(case: CaseSpec) -> list[float]:
    """Interior positions (m) where a property profile of ``case`` has a kink: the breakpoints
    of its measured tables (every family)."""
    d = case.defect
    L = case.beam.length
    out: set[float] = set()
    for g in (d.E, d.rho, d.width, d.height):
        if g.table is not None:
            out.update(L * float(x) for x, _ in g.table if 0.0 < float(x) < 1.0)
    return sorted(out)
