"""A general mechanism (``kind: general``, :class:`~ancf_beam.specs.GeneralSpec`) -> system.

Bodies are numbered in the order the configuration gives them; a point ``"body.marker"`` is a
marker of a rigid body (``cm``: the centre of mass), a point mass (``cm``) or a beam's ``start``,
``mid`` (the point at half the reference length) and ``end``; ``[x, y]`` a ground point.

Joints: ``ground-pin`` and ``revolute`` (:class:`~ancf_beam.mbs.joints.Revolute`), ``prismatic``,
``weld``, ``driver`` (constant speed, the spin-up profile, or a cubic spline through a table).
A revolute with a ``clearance`` becomes a journal-in-bearing
:class:`~ancf_beam.mbs.forces.CircleContact` named after the joint, its journal on the body the
configuration names; a prismatic with a ``guide`` becomes four corner-against-line contacts.
Forces: gravity (the system's ``g``), spring-dampers, torques, point loads. Contacts: two
circles, a journal in a bearing, points against a line.

Initial state: positions assembled from the given ones onto the joints, first by moving the
beams as rigid bodies (:meth:`~ancf_beam.mbs.system.System.assemble_rigidly`: their given
shapes kept, so a guessed angle does not strain them), else by a mass-weighted Gauss-Newton
projection that may deform them (:meth:`~ancf_beam.mbs.system.System.project_positions`; an
error naming the joints when it fails or when equations are redundant); velocities the
closest (in kinetic energy) to the given ones that satisfy the joints and drivers. With
clearance joints or guides the velocities are those of the ideal mechanism (each journal
moving with its bearing). Contacts must start apart or touching (an error naming the
contact otherwise).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ancf_beam.beam.model import BeamModel
from ancf_beam.errors import ConfigError
from ancf_beam.mbs.bodies import BeamBody, Body, Point, PointMass, RigidBody, ground
from ancf_beam.mbs.forces import (
    CircleContact,
    ForceElement,
    LineContact,
    PointForce,
    SpringDamper,
    Torque,
)
from ancf_beam.mbs.joints import Driver, Prismatic, Revolute, Weld
from ancf_beam.mbs.system import System
from ancf_beam.results import RedundantConstraintError
from ancf_beam.specs import MechanismSpec

__all__ = ["GeneralParts", "build_general", "spin_up_profile"]

log = logging.getLogger(__name__)
EPS = float(np.finfo(float).eps)
ASSEMBLY_TOL = 1e-12  # m (rad): the assembled joints' residual, a few eps times the sizes
ASSEMBLY_ITER = 50  # Gauss-Newton iterations of the assembly (quadratic once near)


def spin_up_profile(t: float, omega: float, T: float) -> tuple[float, float, float]:
    """``theta - theta0``, its rate and acceleration of the spin-up manoeuvre: ``(omega/T)
    (t^2/2 + (T/(2 pi))^2 (cos(2 pi t/T) - 1))`` for ``t < T``, ``omega (t - T/2)`` after."""
    if t >= T:
        return omega * (t - 0.5 * T), omega, 0.0
    a = 2.0 * math.pi / T
    th = (omega / T) * (0.5 * t * t + (math.cos(a * t) - 1.0) / (a * a))
    return th, (omega / T) * (t - math.sin(a * t) / a), (omega / T) * (1.0 - math.cos(a * t))


@dataclass
class GeneralParts:
    """Handles on a built general mechanism, by name."""

    markers: dict[str, Point] = field(default_factory=dict)
    bodies: dict[str, Body] = field(default_factory=dict)
    drivers: dict[str, Driver] = field(default_factory=dict)
    contacts: dict[str, ForceElement] = field(default_factory=dict)
    continuous_factor: dict[str, float] = field(default_factory=dict)
    v_impact: float | None = None  # the contacts' characteristic impact speed (m/s)

    def contact_kw(self, name: str, gen) -> dict[str, Any]:
        """The law, friction, reduced mass and impact speed of contact ``name``; a nonsmooth
        contact (``model: nonsmooth``) its model, restitution and Coulomb ``mu`` instead of the
        laws (no force law: a unilateral constraint of the moreau-jean time stepping)."""
        spec = gen.laws[name]
        out = dict(m_eff=gen.m_eff.get(name), v_impact=gen.v_impact.get(name, self.v_impact))
        if spec.nonsmooth:
            return dict(out, model="nonsmooth", restitution=spec.law.restitution, mu=spec.law.mu)
        return dict(out, law=spec.law, friction=spec.friction)

    def register(self, contacts: list, name: str, gen) -> list:
        """Record the contact elements built for contact ``name`` (by element name)."""
        for fe in contacts:
            self.contacts[fe.name] = fe
            self.continuous_factor[fe.name] = gen.laws[name].continuous_factor
        return contacts


def _rigid(name: str, b: dict) -> RigidBody:
    return RigidBody(
        name,
        mass=b["mass"],
        inertia=b["inertia"],
        position=tuple(b["position"]),
        angle=b["angle"],
        velocity=tuple(b["velocity"]),
        angular_velocity=b["angular_velocity"],
    )


def _place_beam(name: str, b: dict, model: BeamModel, parts: GeneralParts) -> BeamBody:
    origin, angle = tuple(b["origin"]), b["angle"]
    if b["attach"] is not None:
        host_name, marker = b["attach"].split(".")
        host = parts.bodies[host_name]
        s = (0.0, 0.0) if marker == "cm" else b["__markers__"][host_name][marker]
        c, sn = math.cos(host.angle), math.sin(host.angle)
        origin = (host.position[0] + c * s[0] - sn * s[1], host.position[1] + sn * s[0] + c * s[1])
        angle = host.angle + angle
    return BeamBody(name, model=model, origin=origin, angle=angle)


def _bodies(gen, parts: GeneralParts) -> None:
    markers = {n: b.get("markers", {}) for n, b in gen.bodies.items()}
    for name, b in gen.bodies.items():
        if b["type"] == "rigid":
            body = _rigid(name, b)
            pts = {"cm": body.marker(0.0, 0.0, f"{name}.cm")}
            pts.update({m: body.marker(*s, f"{name}.{m}") for m, s in b["markers"].items()})
        elif b["type"] == "point-mass":
            body = PointMass(
                name, mass=b["mass"], position=tuple(b["position"]), velocity=tuple(b["velocity"])
            )
            pts = {"cm": body.point()}
        else:
            model = BeamModel(gen.beams[name])
            body = _place_beam(name, {**b, "__markers__": markers}, model, parts)
            mid = model.length / 2
            pts = {"start": body.node(0), "mid": body.point(mid), "end": body.node(-1)}
        parts.bodies[name] = body
        parts.markers.update({f"{name}.{m}": p for m, p in pts.items()})


def _point(ref: Any, parts: GeneralParts, q0: np.ndarray | None = None) -> Point:
    if isinstance(ref, str):
        return parts.markers[ref]
    return ground(float(ref[0]), float(ref[1]))


def _driver(name: str, j: dict, parts: GeneralParts) -> Driver:
    body = parts.bodies[j["body"]]
    th0 = body.angle if j["theta0"] is None else float(j["theta0"])
    if j["profile"] == "constant":
        return Driver(name, body=body, omega=j["omega"], theta0=th0)
    if j["profile"] == "spin-up":
        w, T = j["omega"], j["T"]

        def fn(t, w=w, T=T, th0=th0):
            th, dth, ddth = spin_up_profile(t, w, T)
            return th0 + th, dth, ddth

        return Driver(name, body=body, theta0=th0, function=fn)
    from scipy.interpolate import CubicSpline  # here: at module level it cost every
    # process importing the multibody layer 0.2-0.6 s (scipy.optimize, scipy.special with it)

    spline = CubicSpline(j["table"]["t"], j["table"]["theta"])
    d1, d2 = spline.derivative(1), spline.derivative(2)
    return Driver(
        name,
        body=body,
        theta0=th0,
        function=lambda t: (float(spline(t)), float(d1(t)), float(d2(t))),
    )


def _initial_position(p: Point, system_q: np.ndarray) -> tuple[float, float]:
    x, y = p.position(system_q)
    return float(x), float(y)


def _joint(name: str, j: dict, parts: GeneralParts, q0: np.ndarray, ideal: bool, gen) -> list:
    kind = j["type"]
    if kind == "driver":
        drv = _driver(name, j, parts)
        parts.drivers[name] = drv
        return [drv]
    if kind == "ground-pin":
        p = parts.markers[j["point"]]
        at = j["at"] if j["at"] is not None else _initial_position(p, q0)
        return [Revolute(name, p=p, q=ground(*at))]
    if kind == "weld":
        return [Weld(name, a=_point(j["points"][0], parts), b=_point(j["points"][1], parts))]
    if kind == "revolute":
        p, q = (_point(r, parts) for r in j["points"])
        if j["clearance"] is None or ideal:
            return [Revolute(name, p=p, q=q)]
        return [_clearance(name, j, p, q, parts, gen)]
    p, through = parts.markers[j["point"]], _point(j["through"], parts)
    if j["guide"] is None or ideal:
        return [
            Prismatic(
                name,
                p=p,
                through=through,
                direction=tuple(j["direction"]),
                lock_rotation=j["lock_rotation"],
            )
        ]
    return _guide(name, j, p, through, parts, gen)


def _bearing(name, bearing, journal, r_b, r_j, parts, gen) -> CircleContact:
    """A journal (radius ``r_j``) in a bearing (radius ``r_b``): one circle contact, the laws of
    ``name``. A revolute's clearance and a ``circle-in-bearing`` contact are both this."""
    contact = CircleContact(
        name, p=bearing, q=journal, inside=True, r_p=r_b, r_q=r_j, **parts.contact_kw(name, gen)
    )
    return parts.register([contact], name, gen)[0]


def _clearance(name, j, p, q, parts, gen) -> CircleContact:
    cl = j["clearance"]
    journal, bearing = (p, q) if p.body is not None and p.body.name == cl["journal"] else (q, p)
    return _bearing(name, bearing, journal, cl["bearing_radius"], cl["journal_radius"], parts, gen)


def _guide(name, j, p, through, parts, gen) -> list:
    """A prismatic joint's guide gap: the slider's four corners against the guide lines."""
    g = j["guide"]
    contacts = LineContact.guide_corners(
        name,
        slider=p.body,
        a=g["a"],
        b=g["b"],
        gap=g["clearance"],
        guide=through,
        direction=tuple(j["direction"]),
        **{**parts.contact_kw(name, gen), "m_eff": None},
    )
    return parts.register(contacts, name, gen)


def _force(name: str, f: dict, parts: GeneralParts) -> list:
    kind = f["type"]
    if kind == "gravity":
        return []
    if kind == "spring-damper":
        p, q = (_point(r, parts) for r in f["points"])
        return [SpringDamper(name, p=p, q=q, k=f["k"], c=f["c"], l0=f["l0"])]
    if kind == "torque":
        return [Torque(name, body=parts.bodies[f["body"]], torque=f["torque"])]
    return [PointForce(name, point=parts.markers[f["point"]], force=tuple(f["force"]))]


def _contact(name: str, c: dict, parts: GeneralParts, gen) -> list:
    common = parts.contact_kw(name, gen)
    if c["type"] == "circle-in-bearing":
        p, q = _point(c["bearing"], parts), parts.markers[c["journal"]]
        return [_bearing(name, p, q, c["bearing_radius"], c["journal_radius"], parts, gen)]
    if c["type"] == "circle-circle":
        p, q = (_point(r, parts) for r in c["points"])
        out = [
            CircleContact(
                name, p=p, q=q, inside=False, r_p=c["radii"][0], r_q=c["radii"][1], **common
            )
        ]
    else:
        out = []
        for i, ref in enumerate(c["points"]):
            out.append(
                LineContact(
                    name if len(c["points"]) == 1 else f"{name}_{i + 1}",
                    p=parts.markers[ref],
                    r=c["radius"],
                    through=_point(c["through"], parts),
                    direction=tuple(c["direction"]),
                    segment=None if c["segment"] is None else tuple(c["segment"]),
                    **common,
                )
            )
    return parts.register(out, name, gen)


def _system(spec: MechanismSpec, gen, ideal: bool, v_impact: float | None):
    """The system of ``gen`` (``ideal``: clearance joints and guides as ideal joints)."""
    parts = GeneralParts(v_impact=v_impact)
    _bodies(gen, parts)
    system = System(g=gen.g, name=spec.name)
    system.add(*parts.bodies.values())
    q0 = np.concatenate([b.initial_coordinates() for b in parts.bodies.values()])
    _offsets(parts, q0)
    items: list = []
    for name, j in gen.joints.items():
        items += _joint(name, j, parts, q0, ideal, gen)
    for name, f in gen.forces.items():
        items += _force(name, f, parts)
    if not ideal:
        for name, c in gen.contacts.items():
            items += _contact(name, c, parts, gen)
    try:
        if items:
            system.add(*items)
    except ValueError as exc:
        raise ConfigError(f"mechanisms.{spec.name}: {exc}") from exc
    return system, parts


def _offsets(parts: GeneralParts, q0: np.ndarray) -> None:
    """Temporary offsets so that points can be evaluated on the guess before finalize."""
    off = 0
    for b in parts.bodies.values():
        b.offset = off
        off += b.n_dof


def _assemble(spec: MechanismSpec, system: System) -> np.ndarray:
    """Finalize and assemble: positions on the joints, redundancy checked (ConfigError)."""
    where = f"mechanisms.{spec.name}"
    try:
        system.finalize(check=False)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    q = system.q0
    if system.m == 0:
        return q
    scale = max(1e-3, float(np.max(np.abs(q))))
    if np.max(np.abs(system.constraints(q)["phi"])) > 1e-12 * scale:  # the integrators' test
        rigid = None
        if system.beams:
            rigid = system.assemble_rigidly(q, 0.0, ASSEMBLY_TOL, ASSEMBLY_ITER)
        if rigid is not None:  # the beams moved as rigid bodies: their given shapes kept
            _check_real(spec, system, rigid)
            return rigid
        try:
            given, q = q, system.project_positions(q, 0.0, ASSEMBLY_TOL, ASSEMBLY_ITER)
            _report_deformed(spec, system, given, q)
        except ValueError as exc:
            _check_real(spec, system, q)  # redundant joints: named at the guess
            joints = ", ".join(j.name for j in system.joints)
            raise ConfigError(
                f"config keys '{where}.joints' ({joints}) cannot be assembled from the bodies' "
                f"given positions and angles ({exc}): give a position guess closer to an "
                "assembled configuration, or check the joints' points"
            ) from exc
    _check_real(spec, system, q)
    return q


def _report_deformed(spec: MechanismSpec, system: System, given, q) -> None:
    """Warn when the projection (no rigid motion of the beams closes the joints) changed a
    beam's shape: its largest change of an element chord over the element length and of a
    slope's length, so a beam that starts strained is said, with how much."""
    for b in system.beams:
        a, c = (x[b.offset : b.offset + b.n_dof].reshape(-1, 4) for x in (given, q))
        chord = float(np.max(np.abs(_chords(c) - _chords(a)))) / float(b.model.le)
        slope = float(np.max(np.abs(np.hypot(c[:, 2], c[:, 3]) - np.hypot(a[:, 2], a[:, 3]))))
        if max(chord, slope) <= 64.0 * EPS:  # round-off: this beam kept its shape
            continue
        log.warning(
            "mechanisms.%s: no rigid motion of the beams closes the joints; the assembly "
            "deformed beam '%s' (element chords changed by up to %.3g of the element length, "
            "slopes by up to %.3g): it starts strained",
            spec.name,
            b.name,
            chord,
            slope,
        )


def _chords(nodes: np.ndarray) -> np.ndarray:
    return np.hypot(*np.diff(nodes[:, :2], axis=0).T)


def _check_real(spec: MechanismSpec, system: System, q: np.ndarray) -> None:
    where = f"mechanisms.{spec.name}"
    try:
        system.finalize(check=False)
        system.check_redundancy(q, 0.0)
    except RedundantConstraintError as exc:
        keys = ", ".join(f"'{where}.joints.{j}'" for j in exc.joints)
        raise ConfigError(f"config keys {keys}: {exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def build_general(spec: MechanismSpec, gen=None):
    """Build, assemble and return ``(system, parts, q0, v0)``: the finalized system, the handles
    on its parts, the assembled positions and the initial velocities (module docstring; None
    without contacts: the integrators make the given ones consistent) of
    ``gen`` (default ``spec.general``; a preset passes its expansion).

    With contacts, the ideal mechanism (clearance joints and guides ideal) is assembled first:
    its positions (journals centred) and velocities start the run, and its fastest marker's
    speed is the contacts' characteristic impact speed ``v_impact`` (m/s, at least 1e-3)."""
    gen = spec.general if gen is None else gen
    if not gen.laws:
        system, parts = _system(spec, gen, ideal=False, v_impact=None)
        q = _assemble(spec, system)
        v = None  # the integrators make the given velocities consistent
    else:
        ideal, iparts = _system(spec, gen, ideal=True, v_impact=None)
        q = _assemble(spec, ideal)
        v = ideal.consistent_velocities(q, 0.0)
        speeds = [np.hypot(*p.velocity(q, v)) for p in iparts.markers.values()]
        system, parts = _system(spec, gen, ideal=False, v_impact=max(max(speeds), 1e-3))
        _check_real(spec, system, q)
        _check_apart(spec, gen, system, q)
    system.q0 = q
    return system, parts, q, v


def _check_apart(spec: MechanismSpec, gen, system: System, q: np.ndarray) -> None:
    """Contacts start apart or touching: a penetration at the assembled positions beyond their
    round-off (``64 eps max(|q0|, 1 mm)``, the index-3 Newton floor) is a placement mistake
    (a wall through a beam, two discs placed one inside the other) that would start the run
    with a contact force the configuration never meant; ConfigError naming the contact."""
    tol = 64.0 * EPS * max(1e-3, float(np.max(np.abs(q))))
    gaps = system.contact_gaps(q)
    for fe, gap in zip(system.forces, gaps, strict=True):
        if gap < -tol:
            joint = fe.name.split(".")[0]
            if fe.name in gen.contacts or joint not in gen.joints:
                key = f"contacts.{fe.name}"
            else:
                key = f"joints.{joint}.{'guide' if gen.joints[joint].get('guide') else 'clearance'}"
            raise ConfigError(
                f"config key 'mechanisms.{spec.name}.{key}': the contact '{fe.name}' penetrates "
                f"{-gap:.6g} m at t = 0 (its gap at the assembled positions); contacts start "
                f"apart or touching (a penetration of at most the assembly's round-off, "
                f"{tol:.2g} m): place the bodies, or the contact's line or circles, so that the "
                "surfaces do not overlap"
            )
