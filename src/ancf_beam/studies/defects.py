"""Defect families: case classification and the helpers the defect studies share."""

from __future__ import annotations

import numpy as np

from ancf_beam.specs import CaseSpec

__all__ = [
    "convergence_expected",
    "curved_linear_static_tip",
    "damage_at",
    "families",
    "family_label",
    "frozen_damage_model",
    "gauss_positions",
    "large_deflection",
    "linear_tip_ratio",
    "reference_curvature",
    "straight_elastic",
    "uniform_counterpart",
]


def families(case: CaseSpec) -> list[str]:
    """Active defect families of ``case``: ``E`` (power law on the modulus), ``table``
    (measured profile on any property), ``density``, ``width``, ``height`` (power laws),
    ``imperfection`` (initially curved reference), ``damage``. Empty for the uniform beam."""
    flat = case.flat()
    out = []
    if float(flat.get("defect.lam", 0.0)) > 0:
        out.append("E")
    if any(flat.get(k) not in (None, "none") for k in flat if k.endswith("table")):
        out.append("table")
    for key, name in (("rho", "density"), ("width", "width"), ("height", "height")):
        if float(flat.get(f"defect.{key}.lam", 0.0)) > 0:
            out.append(name)
    if case.imperfection.active:
        out.append("imperfection")
    if case.damage.enabled:
        out.append("damage")
    return out


def family_label(case: CaseSpec) -> str:
    """Short description of the families of ``case`` (``'uniform'`` when none)."""
    f = families(case)
    return "+".join(f) if f else "uniform"


def straight_elastic(case: CaseSpec) -> bool:
    """True when the straight linear-elastic references apply (no initial curvature, no
    damage): the rule of :func:`ancf_beam.studies.validation.run_validation`."""
    fam = families(case)
    return "imperfection" not in fam and "damage" not in fam


#: Linear tip deflection / L above which a case counts as *large deflection*: the geometric
#: nonlinearity (~ (w/L)^2) then exceeds 1e-4, beyond the precision of the small-deflection
#: references (linear quadrature, linear modal superposition, vibration about the static state).
#: The seed beams deflect 0.9-3.4e-3 L; E0 = 2.07e8 Pa gives 1.4 L (tip angle -63 deg).
LARGE_DEFLECTION = 0.01


def linear_tip_ratio(case: CaseSpec) -> float:
    """``|w_lin(L)| / L`` of the straight linear beam of ``case`` under its self-weight
    (exact graded quadrature, :func:`ancf_beam.references.transfer.exact_graded_static`)."""
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references.transfer import exact_graded_static

    p = SectionProfile(case)
    L = case.beam.length
    return abs(float(exact_graded_static(L, p.EI, p.q, n_points=201)["tip_deflection"])) / L


def large_deflection(case: CaseSpec) -> bool:
    """True when the small-deflection references do not apply (:data:`LARGE_DEFLECTION`)."""
    return linear_tip_ratio(case) > LARGE_DEFLECTION


def reference_curvature(case: CaseSpec):
    """Curvature ``kappa0(X)`` (1/m) of the case's stress-free reference as a callable of the
    reference coordinate (m), or None for a straight beam (for
    :func:`ancf_beam.references.elastica.solve_elastica`)."""
    from ancf_beam.beam.imperfection import resolved_kappa0

    imp = case.imperfection
    if not imp.active:
        return None
    L = case.beam.length
    k0 = resolved_kappa0(imp, L)
    if imp.profile == "uniform":
        return lambda X: np.full(np.shape(X), k0)
    return lambda X: k0 * (1.0 - np.asarray(X, float) / L)


def uniform_counterpart(case: CaseSpec) -> CaseSpec:
    """The same case with every defect removed: no gradients, tables, imperfection or damage."""
    flat = case.flat()
    over = {k: 0.0 for k in flat if k.startswith("defect.") and k.endswith(".lam")}
    over.update({"defect.lam": 0.0})
    over.update({k: None for k in flat if k.startswith("defect.") and k.endswith("table")})
    over.update({"imperfection.kappa0": 0.0, "imperfection.tip_offset": None})
    over["damage.enabled"] = False
    return case.with_overrides(over)


def convergence_expected(case: CaseSpec) -> tuple[bool, str]:
    """Whether a mesh-convergence order is expected for ``case``, and why not.

    Local strain-softening damage (``d`` grows with the strain at each integration point, and
    the stiffness falls) localises into the integration points of the most strained element:
    the damaged zone shrinks with the element and the static tip and frequencies depend on the
    mesh instead of converging (no regularisation). Every other family converges.
    """
    if case.damage.enabled:
        return False, (
            "local strain-softening damage localises in the most strained element: results "
            "depend on the mesh (no convergence expected without regularisation)"
        )
    return True, ""


def frozen_damage_model(case: CaseSpec, damage: np.ndarray):
    """:class:`~ancf_beam.beam.model.BeamModel` of ``case`` with damage evolution off and the damage
    field ``damage`` (``(n_el, n_gauss)``, as stored by the static and simulate studies) frozen:
    ``EA_eff = EA (1 - d)``, ``EI_eff = EI (1 - d)`` at every integration point."""
    from ancf_beam.beam.model import BeamModel

    model = BeamModel(case.with_overrides({"damage.enabled": False}))
    model.set_damage(np.asarray(damage, dtype=float))
    return model


def gauss_positions(model) -> np.ndarray:
    """Reference positions (m) of the bending integration points, shape ``(n_el, n_gauss)``."""
    from ancf_beam.beam.model import gauss01

    xi = gauss01(model.case.mesh.n_gauss_bending).xi
    return model.x_nodes[:-1, None] + xi[None, :] * model.le


def damage_at(model, damage: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Damage interpolated linearly between the integration points at positions ``X`` (m)."""
    xg = gauss_positions(model).ravel()
    return np.interp(X, xg, np.asarray(damage, float).ravel())


def curved_linear_static_tip(case: CaseSpec, n: int = 4001) -> tuple[float, float]:
    """Linear (small-displacement, inextensible) tip displacement ``(dx, dy)`` (m) of the
    case's stress-free reference shape under its self-weight, by quadrature.

    The reference centre line ``(X(s), Y(s))`` (arc length ``s``; straight or initially curved,
    :mod:`ancf_beam.beam.imperfection`) carries ``q(s) = rho A g`` (N/m) downward. The bending
    moment is ``M(s) = int_s^L q(t) (X(t) - X(s)) dt``; the rotation it produces, ``dtheta =
    M / EI ds`` (clockwise for a downward load), turns the part beyond ``s`` about ``s``, so the
    tip moves by ``dx = int M/EI (Y(L) - Y(s)) ds`` and ``dy = -int M/EI (X(L) - X(s)) ds``.
    For a straight beam this is ``-q L^4 / 8 EI``; axial strain and the geometric nonlinearity
    are neglected. An independent reference for the ANCF statics of an initially curved beam.
    """
    from scipy.integrate import cumulative_trapezoid

    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.imperfection import resolved_kappa0, tangent_angle

    p = SectionProfile(case)
    L = case.beam.length
    s_ = np.linspace(0.0, L, n)
    imp = case.imperfection
    if imp.active:
        th = tangent_angle(resolved_kappa0(imp, L), imp.profile, s_, L)
    else:
        th = np.zeros_like(s_)
    X = cumulative_trapezoid(np.cos(th), s_, initial=0.0)
    Y = cumulative_trapezoid(np.sin(th), s_, initial=0.0)
    q = np.asarray(p.q(s_), float) * np.ones_like(s_)
    # M(s) = int_s^L q (X(t) - X(s)) dt = Q1(s) - X(s) Q0(s), tail integrals
    q0 = cumulative_trapezoid(q[::-1], -s_[::-1], initial=0.0)[::-1]
    q1 = cumulative_trapezoid((q * X)[::-1], -s_[::-1], initial=0.0)[::-1]
    m = q1 - X * q0
    curv = m / np.asarray(p.EI(s_), float)
    dx = float(np.trapezoid(curv * (Y[-1] - Y), s_))
    dy = float(-np.trapezoid(curv * (X[-1] - X), s_))
    return dx, dy
