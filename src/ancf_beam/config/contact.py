"""``contact:`` and ``friction:`` blocks -> the laws of :mod:`ancf_beam.mbs.laws`.

Keys, ranges and defaults, and which keys each law takes and needs, are the schema's
(``contact_law``, ``friction_law``, ``clearance``); here are the rules that span keys: ``c`` or
``zeta``, ``v_dynamic`` above ``v_static``, a journal inside its bearing, E and nu for a law
without K, no friction block beside a nonsmooth contact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ancf_beam import schema
from ancf_beam.errors import ConfigError
from ancf_beam.mbs.laws import (
    ContactLaw,
    ContactSpec,
    FrictionLaw,
    NonsmoothLaw,
    hertz_conformal_stiffness,
)

__all__ = ["NonsmoothLaw", "contact_law", "contact_spec", "friction_law"]


def _checked(block: Any, name: str, where: str) -> dict[str, Any]:
    """The block validated by the schema's definition ``name``, its defaults filled in."""
    if not isinstance(block, Mapping):
        raise schema.invalid(where, block, schema.describe(schema.node(name)))
    given = schema.check(dict(block), schema.node(name), where)
    return {**schema.defaults(schema.node(name), given), **given}


def contact_law(
    block: Mapping[str, Any],
    where: str,
    m_eff: float | None = None,
    K_default: float | None = None,
) -> ContactLaw | NonsmoothLaw:
    """A ``contact:`` block (``where``: its dotted key) -> its law. ``m_eff`` (kg) converts
    ``zeta`` to ``c``; ``K_default`` serves the hertz-type laws without ``K`` (a clearance's
    conformal stiffness); ``model: nonsmooth`` gives a :class:`NonsmoothLaw`."""
    b = _checked(block, "contact_law", where)
    if b.get("model") == "nonsmooth":
        return NonsmoothLaw(float(b["restitution"]), float(b["mu"]))
    law = b["law"]
    if law == "kelvin-voigt":
        return _kelvin_voigt(b, where, m_eff)
    K = b.get("K", K_default)
    if K is None:
        raise ConfigError(f"config key '{where}.K' is missing: law {law!r} needs a stiffness")
    ce = b.get("restitution")
    return ContactLaw(law, float(K), float(b["exponent"]), 0.0, ce, float(b["v0_min"]))


def _kelvin_voigt(b: dict[str, Any], where: str, m_eff: float | None) -> ContactLaw:
    c, zeta = b.get("c"), b.get("zeta")
    if c is not None and zeta is not None:
        raise ConfigError(f"config keys '{where}.c' and '{where}.zeta' are both given: give one")
    if zeta is not None:
        if m_eff is None:
            raise ConfigError(
                f"config key '{where}.zeta' needs an effective mass here; give c (N s/m) instead"
            )
        c = 2.0 * zeta * math.sqrt(b["k"] * m_eff)
    damping = 0.0 if c is None else float(c)
    return ContactLaw("kelvin-voigt", float(b["k"]), 1.0, damping, None, float(b["v0_min"]))


def friction_law(block: Mapping[str, Any] | None, where: str) -> FrictionLaw:
    """A ``friction:`` block -> its law (``None`` or ``law: none``: no friction)."""
    if block is None:
        return FrictionLaw()
    b = _checked(block, "friction_law", where)
    law = b["law"]
    if law == "none":
        return FrictionLaw()
    if law == "coulomb-transition" and not b["v_dynamic"] > b["v_static"]:
        raise ConfigError(
            f"config key '{where}.v_dynamic' = {b['v_dynamic']!r} is invalid: "
            f"expected a speed above v_static = {b['v_static']!r}"
        )
    values = [float(b[k]) for k in ("mu", "v_static", "v_dynamic", "v_ref")]
    return FrictionLaw(law, *values, float(b.get("mu_static", b["mu"])), float(b["v_stribeck"]))


def contact_spec(
    where: str, block: Mapping[str, Any], radii: tuple[float, float] | None, key: str
) -> ContactSpec:
    """The laws of a block with ``contact``, ``friction`` and ``continuous_factor`` (a
    clearance, a guide, a contact item; ``key``: its dotted key relative to the mechanism).
    With ``radii`` (bearing, journal): the journal inside the bearing, and the conformal Hertz
    stiffness from the block's E and nu when the law has no K. A nonsmooth contact takes no
    friction block (its ``mu`` is Coulomb's)."""
    k_hertz = None
    contact = block["contact"]
    nonsmooth = contact.get("model") == "nonsmooth"
    if nonsmooth and block.get("friction") is not None:
        raise ConfigError(
            f"config key '{where}.friction' = {dict(block['friction'])!r} does not apply to a "
            f"contact with model: nonsmooth (its Coulomb friction is '{where}.contact.mu'): "
            "expected null"
        )
    if radii is not None:
        r_b, r_j = float(radii[0]), float(radii[1])
        if not r_j < r_b:
            expected = f"a number in (0, bearing_radius = {r_b}) (m)"
            raise schema.invalid(f"{where}.journal_radius", r_j, expected)
        if not nonsmooth and contact.get("law") != "kelvin-voigt" and contact.get("K") is None:
            props = schema.properties(schema.node("clearance"))
            for k in ("E", "nu"):
                if block.get(k) is None:
                    expected = schema.describe(props[k]).removeprefix("null or ")
                    raise schema.invalid(
                        f"{where}.{k}", None, f"{expected} (the contact law has no K)"
                    )
            e_mod, nu = block["E"], block["nu"]
            k_hertz = hertz_conformal_stiffness(e_mod, nu, e_mod, nu, r_b, r_j)
    law = contact_law(contact, f"{where}.contact", K_default=k_hertz)
    friction = block.get("friction")
    fr = None if friction is None or nonsmooth else friction_law(friction, f"{where}.friction")
    factor = float(block.get("continuous_factor", 5.0))
    return ContactSpec(law, fr, factor, f"{key}.contact")
