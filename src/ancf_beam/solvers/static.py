"""Static equilibrium under gravity: Newton-Raphson with adaptive load stepping.

Solves ``Q_e(q) + lambda Q_g = 0`` on the free DOFs for ``lambda`` ramped from 0 to 1.

Convergence test (per load step, ``f = ||lambda Q_g||`` the external load): the residual
criterion ``||R|| <= rtol f`` accepts the current state at once; otherwise a Newton increment
``du`` is taken, and the step converges at the next state whose residual is below
``max(rtol f, floor)`` when that increment was negligible,
``||du|| <= rtol (||u - u_ref|| + ||du_1||) + 1e-13 (L + ||q||)`` (``du_1``: the first
increment of the load step, ``u - u_ref`` the displacement from the stress-free reference).
``floor`` is ten times the round-off level of the elastic force, *measured* as ``||Q_e||`` in
strain-free states where it is analytically zero (:meth:`BeamModel.roundoff_floor`). The
residual alone cannot decide on fine meshes: the floor grows like ``n^1.5`` while ``f`` falls
like ``n^-0.5``, so from 1500 elements (seed beam) the *unloaded* start already had a residual
below it and was returned with 0 iterations. The round-off sits in the stiff, short-wave
components, where ``K^-1`` makes it harmless, so the increment stays meaningful at any mesh
(measured: it stalls at 1e-10 of the displacement at 5000 elements). A load step therefore
always takes at least one Newton increment unless the residual criterion holds, and a solve
under a non-zero load that ends at its start vector is a :class:`ConvergenceError`.

Stability (:func:`check_stability`, every solve). Gravity is a dead load, so an equilibrium is
stable exactly when the tangent stiffness on the free DOFs (the clamp eliminated) is positive
definite. A banded Cholesky factorisation of it at the solution decides that at the cost of one
Newton iteration's factorisation; when it fails, the smallest eigenvalue (LAPACK ``dsbevx`` on
the band) tells an unstable state (below ``-64 eps ||K||``) from one whose stability double
precision cannot decide (within that of zero). Either is a :class:`StaticSolutionError`: Newton
converged to a state that is not the beam's equilibrium under its weight (a beam of L = 1000 m,
h = 1e-6 m folded with 99 % strain, tip (26.8, -169.7) m on 20 elements, -689 m on 400).

Two paths, chosen by cost. A static solve of a small mesh takes milliseconds; loading numba
and its cached kernels takes about a second (1.3 of a warm ``ancf-beam static``'s 2.1 s on a
Zen 3 VM). So in a process that has not loaded numba, a mesh up to
:data:`DENSE_MAX_ELEMENTS` elements without damage (whose growth law is a numba kernel) is
solved in plain numpy: the element of :mod:`ancf_beam.beam.element`, ``np.linalg.solve`` on
the dense free tangent, a dense Cholesky factorisation for stability (``eigvalsh`` when it
fails); ``ancf-beam static`` of a small beam then starts and ends without numba. Once numba is
loaded the compiled path is the cheaper one (warm, 0.66 against 8.3 ms per solve at 20
elements, 3.9 against 97 at 100), and so it is for larger meshes in any process (a dense solve
grows like ``n^3``). :func:`uses_dense_path` states the rule; ``solve_static(dense=...)``
chooses a path explicitly. Both paths run the same iterations with the same criteria (the
round-off floor measured with each path's own force); ``tests/test_static_paths.py`` holds
their answers equal within the Newton tolerance and the element's force and tangent equal to
round-off. Where the two differ is only where round-off decides: a beam so slender that its
tangent's condition reaches ``1 / eps`` (the folded beam above: the compiled path converges to
the unstable fold after 160 iterations, the dense one stalls at a load factor of 1e-3). So a
solve the dense path does not finish (no equilibrium, a singular tangent) is done again on the
compiled path, once, and its answer or refusal is the one reported: every failure message is
that path's.

Strain (:func:`check_strain`, the answers of ``ancf-beam static`` and the pipeline's static
job): the element's law ``N = EA (|r'| - 1)`` with a constant section is a small-strain model,
valid to :data:`MAX_AXIAL_STRAIN`. A larger strain is refused: as bad input (a
:class:`~ancf_beam.config.ConfigError`, exit 2) when the beam's weight can strain it that much,
``max W(x) / EA(x)`` (``W(x)`` the weight beyond ``x``, which bounds the axial force of every
equilibrium of the continuous beam) exceeds the limit, else as a solution the mesh does not
resolve (:class:`StaticSolutionError`, exit 1: refine the mesh).
"""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import numpy as np

from ancf_beam.beam import element
from ancf_beam.beam.model import CLAMP, BeamModel, gauss01
from ancf_beam.config import MAX_ELEMENTS, ConfigError
from ancf_beam.kernel_cache import install_compile_clock
from ancf_beam.results import ConvergenceError, StaticResult, StaticSolutionError

__all__ = [
    "DENSE_MAX_ELEMENTS",
    "MAX_AXIAL_STRAIN",
    "check_stability",
    "check_strain",
    "solve_static",
]

#: Largest axial strain ``|eps - eps0|`` of a reported static equilibrium. Beyond it the
#: linear law ``N = EA (|r'| - 1)`` with a constant section is no material model: the section
#: shrinks by about ``2 nu eps`` (0.6 % at 1 % strain, nu = 0.3) and the strain measures
#: (Biot, Green-Lagrange) differ by ``eps / 2`` relative; metals yield at 0.2 %.
MAX_AXIAL_STRAIN = 0.01

#: Meshes up to this many elements (without damage) are solved in plain numpy with dense
#: linear algebra in a process without numba (module docstring, "Two paths").
DENSE_MAX_ELEMENTS = 100

#: outcomes of the Newton iterations: those of ``static_kernel.newton_kernel`` (importing it
#: loads numba), repeated for :func:`_newton_dense`
CONVERGED, NOT_CONVERGED, SINGULAR = 1, 0, -1

log = logging.getLogger(__name__)


def solve_static(
    model: BeamModel,
    q0: np.ndarray | None = None,
    load_steps: int | None = None,
    max_iterations: int | None = None,
    rtol: float | None = None,
    max_cutbacks: int | None = None,
    dense: bool | None = None,
) -> StaticResult:
    """Static equilibrium of the cantilever under its self-weight (full load ``lambda = 1``).

    With ``damage.enabled`` the damage grown along the load path stays in ``model`` (its
    ``damage``, ``ea_w`` and ``ei_w``), so later analyses of the same model see the damaged beam.
    ``dense``: the plain-numpy path (True) or the numba kernels (False); by default the numpy
    path when :func:`uses_dense_path`, and the kernels when it finds no equilibrium (module
    docstring, "Two paths").
    """
    options = (q0, load_steps, max_iterations, rtol, max_cutbacks)
    if dense is None and uses_dense_path(model):
        try:
            return _solve(model, *options, dense=True)
        except (ConvergenceError, np.linalg.LinAlgError) as exc:
            log.info("static: the dense path found no equilibrium (%s); the compiled path", exc)
        dense = False
    if dense and model.case.damage.enabled:
        raise ValueError("the dense static path has no damage model: use dense=False")
    return _solve(model, *options, dense=bool(dense))


def _solve(model, q0, load_steps, max_iterations, rtol, max_cutbacks, dense) -> StaticResult:
    """:func:`solve_static` on one path."""
    if not dense:
        install_compile_clock()  # before the first kernel: its loading is not run time
    spec = model.case.static
    load_steps = spec.load_steps if load_steps is None else load_steps
    max_iterations = spec.max_iterations if max_iterations is None else max_iterations
    rtol = spec.rtol if rtol is None else rtol
    max_cutbacks = spec.max_cutbacks if max_cutbacks is None else max_cutbacks

    q_ref = model.reference()
    floor = model.roundoff_floor(dense=dense)
    g_norm = float(np.linalg.norm(model.gravity_free))
    q = q_ref.copy() if q0 is None else np.array(q0, dtype=float)
    if g_norm == 0.0:
        # zero load: the stress-free reference is the equilibrium, but solve from the start
        # vector and check the residual rather than assume it
        ok, iters, rnorm, tol = _newton(model, q, 1.0, 0.0, floor, rtol, max_iterations, dense)
        if not ok:
            raise ConvergenceError(
                f"static Newton did not converge without load after {iters} iterations "
                f"(residual {rnorm:.3e} N, tolerance {tol:.3e} N)"
            )
        check_stability(model, q, dense=dense)
        x, y, a = model.tip(q)
        return StaticResult(q, x, y, float(np.degrees(a)), iters, 1, 0, rnorm, tol)

    def newton(trial: np.ndarray, lam: float):
        return _newton(model, trial, lam, g_norm, floor, rtol, max_iterations, dense)

    q_start = q.copy()
    res = _load_path(model, q, newton, 1.0 / load_steps, max_cutbacks, floor)
    if np.array_equal(res.q, q_start) and res.residual_norm > rtol * g_norm:
        raise ConvergenceError(
            f"static solve made no progress from its start vector under a load of "
            f"{g_norm:.3e} N (residual {res.residual_norm:.3e} N, tolerance "
            f"{res.residual_tol:.3e} N)"
        )
    check_stability(model, res.q, dense=dense)
    return res


def uses_dense_path(model: BeamModel, numba_loaded: bool | None = None) -> bool:
    """Whether :func:`solve_static` takes the plain-numpy path for ``model`` by default: a mesh
    up to :data:`DENSE_MAX_ELEMENTS` elements without damage, in a process that has not loaded
    numba (``numba_loaded``: this process's state when None; module docstring)."""
    if numba_loaded is None:
        numba_loaded = "numba" in sys.modules
    small = model.n_el <= DENSE_MAX_ELEMENTS and not model.case.damage.enabled
    return small and not numba_loaded


def check_stability(model: BeamModel, q: np.ndarray, dense: bool = False) -> None:
    """Raise :class:`StaticSolutionError` unless the tangent stiffness at ``q`` is positive
    definite on the free DOFs (module docstring); ``dense``: with the plain-numpy element and
    dense linear algebra instead of the numba kernels and the band."""
    if dense:
        k = element.tangent_dense(q, *model.kernel_args())[CLAMP:, CLAMP:]
        try:
            np.linalg.cholesky(k)
            return
        except np.linalg.LinAlgError:
            pass
        k_norm = float(np.max(np.abs(k).sum(axis=1)))  # ||K||_inf >= ||K||_2
        lam_min = float(np.linalg.eigvalsh(k)[0])
        _refuse_unstable(model, q, lam_min, k_norm)  # raises
    from ancf_beam.linalg import BANDWIDTH, CHOLESKY

    if model.tangent_factor(q) == CHOLESKY:  # the Newton solves' assembly and factorisation
        return
    ab = model.tangent_band(q)  # free DOFs, ab[7 + i - j, j] = K[i, j]
    lb = np.ascontiguousarray(ab[BANDWIDTH:])  # lower band lb[i - j, j] = K[i, j]
    n = lb.shape[1]
    rows = np.abs(lb).sum(axis=0)  # ||K||_inf >= ||K||_2 (Gershgorin): lower part by columns
    for d in range(1, lb.shape[0]):
        rows[d:] += np.abs(lb[d, : n - d])  # and the upper part, row by row
    k_norm = float(np.max(rows))
    import scipy.linalg as sla  # only when the Cholesky factorisation failed (start-up time)

    lam_min = float(sla.eigvals_banded(lb, lower=True, select="i", select_range=(0, 0))[0])
    _refuse_unstable(model, q, lam_min, k_norm)


def _refuse_unstable(model: BeamModel, q: np.ndarray, lam_min: float, k_norm: float) -> NoReturn:
    """Raise the :class:`StaticSolutionError` of a tangent that is not positive definite:
    smallest eigenvalue ``lam_min``, norm ``k_norm``."""
    tau = 64.0 * np.finfo(float).eps * k_norm  # eigenvalue round-off of the assembled tangent
    slender = f"EI / (EA L^2) = {_slenderness(model):.2g}"
    if lam_min < -tau:
        raise StaticSolutionError(
            f"static: the equilibrium found is unstable: the tangent stiffness has a negative "
            f"eigenvalue {lam_min:.4g} (largest about {k_norm:.4g}, N/m and N units), so Newton "
            f"converged to a state that is not the hanging beam's equilibrium (tip "
            f"({q[-4]:.6g}, {q[-3]:.6g}) m); refine mesh.n_elements or raise static.load_steps "
            f"({slender})"
        )
    raise StaticSolutionError(
        f"static: the stability of the equilibrium found cannot be decided in double precision: "
        f"the smallest tangent eigenvalue {lam_min:.3g} is within round-off ({tau:.3g}) of zero "
        f"(a tangent stiffness of condition above 1 / (64 eps)); the beam is too slender for the "
        f"mesh ({slender})"
    )


def _slenderness(model: BeamModel) -> float:
    """``max EI / (EA L^2)`` over the Gauss points: ``h^2 / (12 L^2)`` of a rectangle."""
    ei = model.profile.EI(model.x_nodes)
    ea = model.profile.EA(model.x_nodes)
    return float(np.max(ei / ea)) / model.length**2


#: points of every element at which the axial strain field is checked (ends included)
STRAIN_POINTS = np.linspace(0.0, 1.0, 9)


def axial_strains(model: BeamModel, q: np.ndarray, xi: np.ndarray = STRAIN_POINTS) -> np.ndarray:
    """Axial strain field ``eps - eps0`` of the state ``q`` at the local points ``xi`` of every
    element (n_el, len(xi)), measured from the stress-free reference as the model's energy."""
    _, sp, _ = element.shape_tables(xi, model.le)

    def eps(state):
        nodes = np.asarray(state, float)[: model.n_dof].reshape(-1, 2, 2)  # node, (r, r'), xy
        blocks = np.concatenate([nodes[:-1], nodes[1:]], axis=1)  # element, 4 dofs, xy
        rp = sp @ blocks  # element, point, xy
        if model.linear:
            return rp[..., 0] - 1.0
        return np.sqrt(rp[..., 0] ** 2 + rp[..., 1] ** 2) - 1.0

    return eps(q) - eps(model.reference())


def weight_strain_bound(model: BeamModel) -> float:
    """``max W(x) / EA(x)``: the largest axial strain of any equilibrium of the continuous
    beam under its weight (the axial force at ``x`` is at most the weight ``W(x)`` beyond
    ``x``), bounded from above with the weight of whole elements and the smallest effective
    ``EA`` of an element's axial Gauss points."""
    w = gauss01(model.case.mesh.n_gauss_axial).w
    ea = model.ea_w / (w * model.le)  # damaged EA at the axial Gauss points (N)
    weight = model.g * np.cumsum(model.rhoa_w.sum(axis=1)[::-1])[::-1]  # N, elements e..end
    return float(np.max(weight / np.min(ea, axis=1)))


def check_strain(model: BeamModel, q: np.ndarray) -> float:
    """Largest axial strain of the state ``q``; raise when it exceeds
    :data:`MAX_AXIAL_STRAIN` (module docstring): :class:`~ancf_beam.config.ConfigError` when the
    beam's weight can strain it that much, else :class:`StaticSolutionError`."""
    eps = np.abs(axial_strains(model, q))
    worst = float(np.max(eps))
    if not worst > MAX_AXIAL_STRAIN:  # NaN too: io.check_finite names a non-finite result
        return worst
    el = int(np.unravel_index(np.argmax(eps), eps.shape)[0])
    where = f"largest |eps| = {worst:.3g} in element {el + 1} of {model.n_el}"
    bound = weight_strain_bound(model)
    c = model.case
    if bound > MAX_AXIAL_STRAIN:
        raise ConfigError(
            f"static: the beam's weight strains it beyond the model's validity ({where}; its "
            f"weight can strain it by up to {bound:.3g}, about material.rho load.g beam.length "
            f"/ material.E0 = {c.material.rho:g} x {c.load.g:g} x {c.beam.length:g} / "
            f"{c.material.E0:g}): the law N = EA (|r'| - 1) holds for |eps| <= "
            f"{MAX_AXIAL_STRAIN:g}; raise material.E0 or lower load.g, material.rho or "
            "beam.length"
        )
    raise StaticSolutionError(
        f"static: the solution is not resolved by the mesh: {where}, while no equilibrium of "
        f"the beam strains it by more than {bound:.3g} (its weight over its axial stiffness) "
        f"and the model holds for |eps| <= {MAX_AXIAL_STRAIN:g}: the strain comes from the "
        f"discretisation; raise mesh.n_elements (now {model.n_el}, at most {MAX_ELEMENTS})"
    )


def _equilibrate_damage(newton, dmg, trial: np.ndarray, target: float, last):
    """Staggered: grow damage at this load level and re-equilibrate until it settles. ``last``:
    (converged, iterations, ||R||, tolerance) of the solve at this level. Returns the same of
    the last solve, with the iterations of the re-solves only."""
    ok, _, rnorm, tol = last
    extra = 0
    for _ in range(100):
        d_before = dmg.d.copy()
        dmg.update(trial)
        if np.max(dmg.d - d_before) <= 1e-10:
            break
        ok, it2, rnorm, tol = newton(trial, target)
        extra += it2
        if not ok:
            break
    return ok, extra, rnorm, tol


def _load_path(model: BeamModel, q, newton, dlam: float, max_cutbacks: int, floor: float):
    """Adaptive load stepping from ``lambda = 0`` to 1 (halving a failed step, doubling after
    a quick one); with damage, small steps along the path and the damage history."""
    lam = 0.0
    total_iter = accepted = cutbacks = 0
    rnorm = 0.0
    tol = floor
    dmg = None
    lams: list[float] = []
    dhist: list[np.ndarray] = []
    if model.case.damage.enabled:
        from ancf_beam.beam.damage import DamageState

        dmg = DamageState(model)
        dlam = min(dlam, 0.1)  # damage is path dependent: follow the load in small steps
    # terminates: every pass accepts a step (lam grows by dlam >= the first step / 2^cutbacks)
    # or spends one of max_cutbacks; a step below the spacing of lam (no progress) is refused
    while lam < 1.0 - 1e-14:
        target = min(1.0, lam + dlam)
        if target <= lam:
            raise ConvergenceError(
                f"static load stepping stalled at load factor {lam:.17g}: the step {dlam:.3e} "
                "is below its round-off after the cutbacks; lower static.max_cutbacks or raise "
                "static.load_steps"
            )
        trial = q.copy()
        saved = dmg.save() if dmg is not None else None
        ok, iters, rnorm, tol = newton(trial, target)
        total_iter += iters
        if ok and dmg is not None:
            last = (ok, iters, rnorm, tol)
            ok, extra, rnorm, tol = _equilibrate_damage(newton, dmg, trial, target, last)
            total_iter += extra
        if ok:
            q = trial
            lam = target
            accepted += 1
            if iters <= 4:
                dlam = min(1.0, dlam * 2.0)
            if dmg is not None:
                lams.append(lam)
                dhist.append(dmg.d.copy())
                dlam = min(dlam, 0.1)
            log.debug("load factor %.4g reached in %d iterations", lam, iters)
            continue
        if saved is not None:
            dmg.restore(saved)
        cutbacks += 1
        if cutbacks > max_cutbacks:
            raise ConvergenceError(
                f"static Newton did not converge: load factor {target:.4g} after {iters} "
                f"iterations (residual {rnorm:.3e} N, tolerance {tol:.3e} N) and "
                f"{cutbacks - 1} load-step cutbacks; raise static.max_cutbacks or "
                f"static.load_steps"
            )
        dlam *= 0.5
        log.info("load step to %.4g failed; halving to %.4g", target, dlam)
    x, y, a = model.tip(q)
    res = StaticResult(q, x, y, float(np.degrees(a)), total_iter, accepted, cutbacks, rnorm, tol)
    if dmg is not None:
        res.load_factors = np.array(lams)
        res.damage_history = np.array(dhist)
    return res


def _newton(model, q, lam, g_norm, floor, rtol, max_iterations, dense):
    """Newton iterations in place on ``q``; returns (converged, iterations, ||R||, tolerance).

    ``iterations`` counts the Newton increments taken; the returned residual is that of the
    returned ``q`` (see the module docstring for the criteria). The iterations run in plain
    numpy (``dense``, :func:`_newton_dense`) or in one compiled call
    (``static_kernel.newton_kernel``); a singular tangent raises ``numpy.linalg.LinAlgError``."""
    f = lam * g_norm
    strict = rtol * f
    tol = max(strict, floor)
    args = (
        q,
        float(lam),
        np.ascontiguousarray(model.gravity_free),
        float(strict),
        float(tol),
        float(rtol),
        int(max_iterations),
        np.ascontiguousarray(model.reference()[CLAMP:]),
        float(model.length),
        model.kernel_args(),
    )
    if dense:
        status, it, rnorm = _newton_dense(*args)
    else:
        from ancf_beam.solvers.static_kernel import newton_kernel

        work = (np.empty(model.n_dof), model.tangent_work(), np.empty(model.n_free))
        status, it, rnorm = newton_kernel(*args, *work)
    if status == SINGULAR:
        raise np.linalg.LinAlgError("singular tangent stiffness")
    return status == CONVERGED, int(it), float(rnorm), tol


def _newton_dense(q, lam, g_free, strict, tol, rtol, max_it, u_ref, length, kargs):
    """The iterations of ``static_kernel.newton_kernel`` (the same criteria, step by step) with
    the plain-numpy element and a dense solve: ``np.linalg.solve`` (LU with partial pivoting)
    of the free DOFs' tangent."""
    n = g_free.shape[0]
    off = q.shape[0] - n
    u = q[off:]
    du1 = 0.0
    small = False
    rnorm = np.inf
    for it in range(max_it + 1):
        r = element.elastic_force(q, *kargs)[off:] + lam * g_free
        rnorm = float(np.sqrt(r @ r))
        if not np.isfinite(rnorm):
            return NOT_CONVERGED, it, rnorm
        if rnorm <= strict or (small and rnorm <= tol):
            return CONVERGED, it, rnorm
        if it == max_it:
            break
        k = element.tangent_dense(q, *kargs)[off:, off:]
        try:
            du = np.linalg.solve(k, r)
        except np.linalg.LinAlgError:
            return SINGULAR, it, rnorm
        if not np.all(np.isfinite(du)):
            return NOT_CONVERGED, it, rnorm
        u += du
        dnorm = float(np.sqrt(du @ du))
        if it == 0:
            du1 = dnorm
        scale = float(np.linalg.norm(u - u_ref)) + du1
        roundoff = 1e-13 * (length + float(np.linalg.norm(u)))
        small = dnorm <= rtol * scale + roundoff
    return NOT_CONVERGED, max_it, rnorm
