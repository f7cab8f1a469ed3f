"""Assembly of a planar multibody system: bodies, joints and force elements -> one coordinate
vector, one banded mass matrix, constraint rows and force-element tables for the numba kernels.

Equations of motion (SI units; gravity ``g`` m/s^2 along -y)::

    M q'' + Phi_q^T lambda = Q(q, q', t) = Q_g + Q_e(q) + Q_fe(q, q', t),    Phi(q, t) = 0

``M`` is constant: the bodies' mass matrices stacked on the diagonal in the order the bodies were
added (each beam contributes its consistent mass of half-bandwidth 7, a rigid body
``diag(m, m, J)``), stored once as a symmetric band of half-bandwidth 7 and factorised once
(banded Cholesky). The elastic forces and tangent stiffness come from the beam kernels of
:mod:`ancf_beam.beam.kernels` applied to each beam's slice of ``q``; the constraint coupling of
the bodies is handled by a Schur complement with the few constraint rows, so no per-step
factorisation is ever dense in the body coordinates.

Any topology. Joints may connect any bodies (their rows enter only the Schur complement), and so
may force elements: the implicit integrators' iteration matrix is ``K = K_band + U B U^T``, where
``K_band`` (mass, beams, the force elements whose coupled coordinates are at most the
half-bandwidth apart) is banded and each force element that couples coordinates further apart
(a spring between bodies that are not neighbours in ``q``, a contact across a branch or a loop)
adds its whole pair block ``J_d^T B J_d`` (``J_d`` the 2 x n Jacobian of the separation of its
two points, ``B`` its 2 x 2 tangent) as two columns of ``U``. ``K^-1`` is applied by the
push-through (Woodbury) identity with the band factors of ``K_band`` and a small dense
capacitance ``I + B U^T K_band^-1 U`` (:func:`ancf_beam.mbs.core.lowrank_prepare`): exact, ``B``
never inverted (it is singular for a contact, indefinite for a spring in compression, zero for
an open contact, which then costs nothing), and the bodies keep the order the user gave. The
explicit and adaptive integrators need only the mass, always banded. A system without such
elements takes the band path alone, unchanged.

:meth:`System.finalize` checks the model: redundant constraints are found from the rank of
``Phi_q`` at the initial configuration and named
(:class:`~ancf_beam.results.RedundantConstraintError`); the force elements outside the band get
their low-rank slots (a kind whose tangent is not a pair block is refused there).
"""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np

from ancf_beam.beam import kernels
from ancf_beam.beam.damage import DamageState
from ancf_beam.linalg import BANDWIDTH, band_cholesky, sym_band_matvec
from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import BeamBody, Body
from ancf_beam.mbs.forces import (
    N_FLT,
    N_INT,
    STATE_SIZE,
    Contact,
    ForceElement,
    SpringDamper,
)
from ancf_beam.mbs.joints import Driver, Joint, Row, Weld, encode_rows, linear_rows
from ancf_beam.results import RedundantConstraintError

log = logging.getLogger(__name__)

__all__ = ["System"]

RANK_TOL = 1e-9  # relative residual of a unit-normalised Jacobian row counted as dependent


class System:
    """A planar multibody system (see the module docstring).

    Build it with :meth:`add` (bodies, joints, force elements, in any order; bodies are
    numbered in the order given) and call :meth:`finalize` once before integrating.
    """

    def __init__(self, g: float = 9.81, name: str = "system"):
        self.g = float(g)
        self.name = name
        self.bodies: list[Body] = []
        self.joints: list[Joint] = []
        self.forces: list[ForceElement] = []
        self.unilateral: list[ForceElement] = []  # nonsmooth contacts (filled by finalize)
        self._final = False

    # ------------------------------------------------------------------------------------
    # building
    # ------------------------------------------------------------------------------------
    def add(self, *items):
        """Add bodies, joints and force elements; returns the first item (or all of them)."""
        if self._final:
            raise RuntimeError("system already finalized")
        names = {x.name for x in (*self.bodies, *self.joints, *self.forces)}
        for it in items:
            if it.name in names:
                raise ValueError(f"duplicate name '{it.name}' in system '{self.name}'")
            names.add(it.name)
            if isinstance(it, Body):
                self.bodies.append(it)
            elif isinstance(it, Joint):
                self.joints.append(it)
            elif isinstance(it, ForceElement):
                self.forces.append(it)
            else:
                raise TypeError(f"cannot add {type(it).__name__} to a system")
        return items[0] if len(items) == 1 else items

    def body(self, name: str) -> Body:
        return next(b for b in self.bodies if b.name == name)

    def joint(self, name: str) -> Joint:
        return next(j for j in self.joints if j.name == name)

    def finalize(self, t0: float = 0.0, check: bool = True) -> System:
        """Number the coordinates, assemble the constant data and check the constraints."""
        if self._final:
            return self
        self._number_coordinates()
        self._assemble_rows()
        self._split_unilateral()
        self._assemble_forces()
        self._assemble_mass()
        entries, damages = self._assemble_beams()
        self.const_jac = linear_rows(self.rows)
        self.data = (
            self.mlb,
            self.mfac,
            self.qg,
            entries,
            self.nonbeam,
            self.ei,
            self.ef,
            self.fei,
            self.fef,
            self.const_jac,
            len(self.beams),
            damages,
        )
        self._w = self.work()
        self._final = True
        if check:
            self.check_redundancy(self.q0, t0)
        return self

    def _number_coordinates(self) -> None:
        """Give each body its offset in ``q``; the initial coordinates and velocity guess."""
        off = 0
        for b in self.bodies:
            b.offset = off
            off += b.n_dof
        self.n = off
        if self.n == 0:
            raise ValueError(f"system '{self.name}' has no bodies")
        self.q0 = np.concatenate([b.initial_coordinates() for b in self.bodies])
        self.v_guess = np.concatenate([b.initial_velocities() for b in self.bodies])

    def _assemble_rows(self) -> None:
        """The constraint rows of the joints, numbered (function drivers get their index)."""
        rows: list[Row] = []
        self.function_drivers: list[Driver] = []
        for j in self.joints:
            if isinstance(j, Weld):
                j.q0 = self.q0
            j.rows = j.build_rows()
            if isinstance(j, Driver) and j.function is not None:
                j.rows = [dataclasses.replace(j.rows[0], driver=len(self.function_drivers))]
                self.function_drivers.append(j)
            j.first_row = len(rows)
            rows.extend(j.rows)
        self.rows = rows
        self.m = len(rows)
        self.row_labels = [r.label for r in rows]
        self.row_kinds = [r.kind for r in rows]
        self.ei, self.ef = encode_rows(rows)
        if any(r.dofs() and (max(r.dofs()) >= self.n) for r in rows):
            raise ValueError("a joint refers to a body that is not part of the system")

    def _split_unilateral(self) -> None:
        """Move the nonsmooth contacts (``model="nonsmooth"``) out of the force elements into
        ``self.unilateral`` (in the order added) with their geometry tables ``uei``, ``uef``
        (the rows of :meth:`~ancf_beam.mbs.forces.ForceElement.encode`), restitutions ``u_e``
        and friction coefficients ``u_mu``: they are constraints of the Moreau-Jean stepper
        (:mod:`ancf_beam.mbs.moreau`), not forces."""
        self.unilateral = [f for f in self.forces if getattr(f, "nonsmooth", False)]
        self.forces = [f for f in self.forces if not getattr(f, "nonsmooth", False)]
        rows = [fe.encode() for fe in self.unilateral]
        self.uei = np.array([r[0] for r in rows], dtype=np.int64).reshape(-1, N_INT)
        self.uef = np.array([r[1] for r in rows], dtype=float).reshape(-1, N_FLT)
        self.u_e = np.array([fe.restitution for fe in self.unilateral], dtype=float)
        self.u_mu = np.array([fe.mu for fe in self.unilateral], dtype=float)
        for fe in self.unilateral:
            if any(d >= self.n for d in fe.dofs()):
                raise ValueError(f"contact '{fe.name}' refers to a body that is not in the system")

    def _assemble_forces(self) -> None:
        """The force elements' encoded parameters and their (zero) carried state."""
        fi, ff = [], []
        slots = []
        for fe in self.forces:
            if isinstance(fe, SpringDamper):
                fe.resolve(self.q0)
            slots.append(self._tangent_slot(fe, sum(x >= 0 for x in slots)))
            a, b = fe.encode()
            fi.append(a)
            ff.append(b)
        self.fei = np.array(fi, dtype=np.int64).reshape(-1, N_INT)
        self.fef = np.array(ff, dtype=float).reshape(-1, N_FLT)
        self.fst = np.zeros((len(self.forces), STATE_SIZE))
        self.fslot = np.array(slots, dtype=np.int64)
        self.n_low_rank = int(np.sum(self.fslot >= 0))
        self.contact_indices = [i for i, fe in enumerate(self.forces) if isinstance(fe, Contact)]
        #: the force elements that dissipate outside contacts (spring-dampers with c > 0): the
        #: integrators book their work (core.dissipation_power) also in runs without contacts
        self.damper_indices = [
            i for i, fe in enumerate(self.forces) if isinstance(fe, SpringDamper) and fe.c > 0.0
        ]
        self.contact_forces = {i: self.forces[i] for i in self.contact_indices}

    @staticmethod
    def _tangent_slot(fe: ForceElement, used: int) -> int:
        """-1 when the element's tangent fits the band (the coordinates it couples are at most
        the half-bandwidth apart), else its slot in the low-rank part of the iteration matrix
        (``used`` slots taken); an element outside the band whose tangent is not a pair block
        ``J_d^T B J_d`` cannot be represented and is refused."""
        d = fe.dofs()
        if not d or max(d) - min(d) <= BANDWIDTH:
            return -1
        if not fe.pair_tangent:
            raise ValueError(
                f"force element '{fe.name}' ({type(fe).__name__}) couples coordinates {min(d)} "
                f"and {max(d)}, further apart than the band (half-bandwidth {BANDWIDTH}), and its "
                "tangent is not a pair block: add the bodies it connects next to each other"
            )
        return used

    def _assemble_mass(self) -> None:
        """The banded mass matrix, its Cholesky factor and the gravity forces."""
        mlb = np.zeros((BANDWIDTH + 1, self.n))
        qg = np.zeros(self.n)
        for b in self.bodies:
            o = b.offset
            mlb[:, o : o + b.n_dof] = b.mass_lower_band()
            qg[o : o + b.n_dof] = b.gravity(self.g)
        self.mlb = np.ascontiguousarray(mlb)
        self.qg = qg
        self.mfac = np.zeros((2, self.n, BANDWIDTH + 1))
        if not band_cholesky(self.mlb, self.mfac):
            raise ValueError("the system mass matrix is not positive definite")

    def _assemble_beams(self) -> tuple[tuple, tuple]:
        """The beams' kernel entries and their damage entries (both padded with empty ones:
        :func:`beam_entries`), their damage states and the coordinates that belong to no beam;
        returns the two tuples of entries."""
        self.beams = [b for b in self.bodies if isinstance(b, BeamBody)]
        self.damage_states: dict[str, DamageState] = {}
        entries, damages = [], []
        for b in self.beams:
            m = b.model
            if m.case.damage.enabled:
                ds = DamageState(m)
                self.damage_states[b.name] = ds
                dargs = list(ds.args())
                dargs[7:10] = map(float, dargs[7:10])  # one numba type for every beam
                dargs = tuple(dargs)
            else:
                dargs = _dummy_damage_args()
            kargs = m.kernel_args()
            damage = bool(m.case.damage.enabled)
            entries.append((b.offset, b.n_dof, kargs, *_soa_entry(kargs, m.le, damage)))
            damages.append((damage, dargs))
        for _ in range(beam_entries(len(entries)) - len(entries)):
            entries.append((0, 0, _dummy_kernel_args(), *_soa_entry(None, 0, 0)))
            damages.append((False, _dummy_damage_args()))
        beam_dofs = np.zeros(self.n, dtype=bool)
        for b in self.beams:
            beam_dofs[b.offset : b.offset + b.n_dof] = True
        self.nonbeam = np.flatnonzero(~beam_dofs).astype(np.int64)
        return tuple(entries), tuple(damages)

    # ------------------------------------------------------------------------------------
    # numba work arrays
    # ------------------------------------------------------------------------------------
    def work(self) -> tuple:
        """A fresh work tuple ``W`` for the kernels of :mod:`ancf_beam.mbs.core`."""
        n, m = self.n, self.m
        nnz = core.MAX_ROW_NNZ
        return (
            np.zeros(n),  # f: generalized forces
            np.zeros(m),  # phi
            np.zeros(m),  # dphi
            np.zeros((m, nnz), dtype=np.int64),  # jc
            np.zeros((m, nnz)),  # jv
            np.zeros(m, dtype=np.int64),  # jn
            np.zeros(m),  # gamma
            np.zeros(m),  # phi_t
            np.zeros((m, n)),  # Y = M^-1 J^T (rows)
            np.zeros((m, m)),  # Schur complement (LU)
            np.zeros(m, dtype=np.int64),  # its pivots
            np.zeros(m),  # right-hand side / multipliers
            np.zeros(n + 2 * BANDWIDTH),  # padded vector of the band solve
            np.zeros(8),  # point P scratch
            np.zeros(8),  # point Q scratch
            np.zeros(64, dtype=np.int64),  # force-element Jacobian columns
            np.zeros(64),  # and values
            np.zeros((1, 1)),  # LU placeholder (the mass is Cholesky-factorised)
            np.zeros(1, dtype=np.int64),
            np.zeros((max(len(self.function_drivers), 1), 3)),  # user-function driver values
            self.fst,  # force-element state (shared: it belongs to the run)
            np.zeros(4, dtype=np.int64),  # flags: [0] mass Schur factors valid (constant J)
        )

    def lowrank_work(self) -> tuple:
        """A fresh low-rank tuple ``L`` (:func:`ancf_beam.mbs.core.lowrank_prepare`): the force
        elements whose tangent leaves the band, ``n_low_rank`` slots. Without such elements the
        integrators pass None instead, and numba compiles the band path alone."""
        p, n = self.n_low_rank, self.n
        nnz = core.LR_NNZ
        return (
            self.fslot,  # slot of each force element (-1: in the band)
            np.zeros((p, 2, nnz), dtype=np.int64),  # columns of the rows of J_d
            np.zeros((p, 2, nnz)),  # and values
            np.zeros((p, 2), dtype=np.int64),  # their counts
            np.zeros((p, 3)),  # B = (b00, b01, b11)
            np.zeros((2 * p, n)),  # K_band^-1 U
            np.zeros((2 * p, 2 * p)),  # capacitance (LU)
            np.zeros(2 * p, dtype=np.int64),  # its pivots
            np.zeros(p, dtype=np.int64),  # active slots
            np.zeros(2 * p),  # work vector
            np.zeros(1, dtype=np.int64),  # number of active slots
        )

    def update_drivers(self, t: float, W: tuple) -> None:
        """Evaluate the user-function drivers at ``t`` into ``W``."""
        for k, d in enumerate(self.function_drivers):
            W[19][k] = d.function(t)

    @property
    def has_function_drivers(self) -> bool:
        return bool(self.function_drivers)

    # ------------------------------------------------------------------------------------
    # evaluation (Python-level conveniences; the integrators call the kernels directly)
    # ------------------------------------------------------------------------------------
    def _prep(self, t):
        if not self._final:
            raise RuntimeError("call finalize() first")
        self.update_drivers(t, self._w)
        return self._w

    def forces_at(self, q, v, t: float = 0.0) -> tuple[np.ndarray, float, float]:
        """Generalized forces ``Q`` and (strain energy, force-element potential) in J."""
        w = self._prep(t)
        f = np.zeros(self.n)
        q = np.ascontiguousarray(q, float)
        v = np.ascontiguousarray(v, float)
        u, p = core.system_forces(q, v, t, self.data, self.fst, f, w[13], w[14], w[15], w[16])
        return f, float(u), float(p)

    def constraints(self, q, v=None, t: float = 0.0) -> dict[str, np.ndarray]:
        """``phi``, ``dphi`` (``Phi_q v + Phi_t``), ``gamma``, ``phi_t`` and the dense Jacobian."""
        w = self._prep(t)
        q = np.ascontiguousarray(q, float)
        v = np.zeros(self.n) if v is None else np.ascontiguousarray(v, float)
        phi, jc, jv, jn, gam, phit = (w[1], w[3], w[4], w[5], w[6], w[7])
        core.eval_constraints(
            q, v, t, self.ei, self.ef, w[19], phi, jc, jv, jn, gam, phit, w[13], w[14]
        )
        jac = np.zeros((self.m, self.n))
        for r in range(self.m):
            np.add.at(jac[r], jc[r, : jn[r]], jv[r, : jn[r]])
        return {
            "phi": phi.copy(),
            "dphi": jac @ v + phit,
            "gamma": gam.copy(),
            "phi_t": phit.copy(),
            "jacobian": jac,
        }

    def jacobian(self, q, t: float = 0.0) -> np.ndarray:
        return self.constraints(q, None, t)["jacobian"]

    def accelerations(self, q, v, t: float = 0.0, alpha: float = 0.0, beta: float = 0.0):
        """Index-1 accelerations and multipliers at ``(q, v, t)`` (Baumgarte ``alpha``, ``beta``
        in 1/s)."""
        w = self._prep(t)
        a = np.zeros(self.n)
        lam = np.zeros(self.m)
        res = core.accel_index1(
            np.ascontiguousarray(q, float),
            np.ascontiguousarray(v, float),
            t,
            self.data,
            w,
            alpha,
            beta,
            a,
            lam,
        )
        if res[4] == 0.0:
            raise np.linalg.LinAlgError("constraint Jacobian is rank deficient at this state")
        return a, lam

    def mass_matvec(self, x: np.ndarray) -> np.ndarray:
        y = np.empty(self.n)
        sym_band_matvec(self.mlb, np.ascontiguousarray(x, float), y)
        return y

    def mass_dense(self) -> np.ndarray:
        m = np.zeros((self.n, self.n))
        for d in range(min(BANDWIDTH, self.n - 1) + 1):
            idx = np.arange(self.n - d)
            m[idx + d, idx] = self.mlb[d, : self.n - d]
            m[idx, idx + d] = self.mlb[d, : self.n - d]
        return m

    def tangent_dense(self, q, v=None, t: float = 0.0, lam=None, c_v: float = 0.0) -> np.ndarray:
        """``K_T + c_v C_fe + sum lam_r Phi_r,qq`` (dense; the band and the low-rank part of the
        force elements outside it, see :func:`ancf_beam.mbs.core.system_tangent`)."""
        from ancf_beam.linalg import band_to_dense

        w = self._prep(t)
        v = np.zeros(self.n) if v is None else np.ascontiguousarray(v, float)
        lam = np.zeros(self.m) if lam is None else np.ascontiguousarray(lam, float)
        ab = np.zeros((2 * BANDWIDTH + 1, self.n))
        lr = self.lowrank_work() if self.n_low_rank else None
        core.system_tangent(
            np.ascontiguousarray(q, float),
            v,
            t,
            lam,
            self.data,
            self.fst,
            c_v,
            ab,
            w[13],
            w[14],
            w[15],
            w[16],
            lr,
        )
        return band_to_dense(ab) + (0.0 if lr is None else _lowrank_dense(lr, self.n))

    def energies(self, q, v) -> dict[str, float]:
        """Kinetic ``1/2 v^T M v``, strain, gravity potential ``-Q_g . (q - q0)`` and
        force-element potential (J)."""
        _, u, p = self.forces_at(q, v, 0.0)
        kin = 0.5 * float(np.dot(v, self.mass_matvec(v)))
        grav = -float(np.dot(self.qg, np.asarray(q) - self.q0))
        return {"kinetic": kin, "strain": u, "gravity": grav, "force_potential": p}

    def reset_force_state(self, q, v, t: float = 0.0) -> None:
        """Clear the force elements' carried state and record contacts that already touch at
        ``(q, v, t)`` (:func:`ancf_beam.mbs.core.update_force_state`)."""
        self.fst[:] = 0.0
        core.update_force_state(
            np.ascontiguousarray(q, float), np.ascontiguousarray(v, float), t, self.data, self.fst
        )

    def contact_gaps(self, q) -> np.ndarray:
        """Signed gap (m) of every force element (``+inf`` for non-contacts); see
        :func:`ancf_beam.mbs.core.contact_gaps`."""
        out = np.zeros(len(self.forces))
        core.contact_gaps(np.ascontiguousarray(q, float), self.data, out)
        return out

    def contact_history(self, q, v, force_state=None) -> dict[str, dict[str, np.ndarray]]:
        """Per contact element (by name), per sample of ``q``, ``v`` (``(k, n)``): penetration,
        eccentricity, normal and friction force, contact flag (circle and line contacts alike:
        :meth:`ancf_beam.mbs.forces.Contact.evaluate`), using the carried state of each sample
        (``force_state``, ``(k, n_elements, 4)``, e.g. ``MechanismResult.force_state``) for the
        approach speed."""
        q = np.atleast_2d(q)
        v = np.atleast_2d(v)
        out = {}
        for i, fe in self.contact_forces.items():
            out[fe.name] = fe.evaluate(q, v, None if force_state is None else force_state[:, i])
        return out

    @property
    def energy_balance_closes(self) -> bool:
        """True when kinetic + potential energy + the booked dissipation (damage, contacts,
        dampers) is conserved: no driver feeds work in and every force element's work is in its
        potential or in the booked dissipation."""
        return not any(j.works for j in self.joints) and all(f.energy_booked for f in self.forces)

    # ------------------------------------------------------------------------------------
    # consistent initial state
    # ------------------------------------------------------------------------------------
    def check_redundancy(self, q, t: float = 0.0) -> None:
        """Raise :class:`RedundantConstraintError` naming the equations that depend on the
        others (rank of ``Phi_q`` at ``(q, t)``, rows normalised to unit length)."""
        if self.m == 0:
            return
        jac = self.jacobian(q, t)
        basis: list[np.ndarray] = []
        accepted: list[int] = []
        bad: list[tuple[int, list[int]]] = []
        for r in range(self.m):
            row = jac[r]
            nrm = np.linalg.norm(row)
            if nrm == 0.0:
                bad.append((r, []))
                continue
            x = row / nrm
            res = x.copy()
            for _ in range(2):  # Gram-Schmidt, twice for orthogonality
                for b in basis:
                    res -= (b @ res) * b
            if np.linalg.norm(res) <= RANK_TOL:
                coef, *_ = np.linalg.lstsq(jac[accepted].T, row, rcond=None)
                big = np.abs(coef) * np.linalg.norm(jac[accepted], axis=1)
                deps = [accepted[i] for i in np.flatnonzero(big > 1e-8 * nrm)]
                bad.append((r, deps))
                continue
            basis.append(res / np.linalg.norm(res))
            accepted.append(r)
        if not bad:
            return
        rank = len(accepted)
        parts = []
        for r, deps in bad:
            what = f"'{self.row_labels[r]}' (joint '{self._joint_of(r)}')"
            if deps:
                dep = ", ".join(f"'{self.row_labels[d]}'" for d in deps)
                parts.append(f"{what} depends on {dep}")
            else:
                parts.append(f"{what} is empty")
        raise RedundantConstraintError(
            f"system '{self.name}': redundant constraints (rank of Phi_q = {rank} for {self.m} "
            f"equations): " + "; ".join(parts) + ". Remove or relax the named joint equations.",
            rows=[self.row_labels[r] for r, _ in bad],
            joints=sorted({self._joint_of(r) for r, _ in bad}),
        )

    def _joint_of(self, row: int) -> str:
        for j in self.joints:
            if j.first_row <= row < j.first_row + len(j.rows):
                return j.name
        return "?"

    def consistent_velocities(self, q=None, t: float = 0.0, v_guess=None, rigid_beams=True):
        """Velocities satisfying ``Phi_q v + Phi_t = 0`` closest to ``v_guess`` (default: the
        bodies' initial velocities) in the kinetic-energy norm. With ``rigid_beams`` the
        correction of a beam is restricted to its rigid motions (no initial deformation rates)
        whenever that suffices; otherwise the full mass-weighted projection is used."""
        q = self.q0 if q is None else np.asarray(q, float)
        v = self.v_guess.copy() if v_guess is None else np.array(v_guess, float)
        if self.m == 0:
            return v
        c = self.constraints(q, v, t)
        jac, b = c["jacobian"], -c["dphi"]
        mass = self.mass_dense()
        candidates = []
        if rigid_beams and self.beams:
            candidates.append(self._rigid_modes(q)[0])
        candidates.append(np.eye(self.n))
        for tmat in candidates:
            try:
                dw = _reduced_correction(jac, tmat, mass, b)
            except np.linalg.LinAlgError:
                continue
            dv = tmat @ dw
            if np.linalg.norm(jac @ dv - b) <= 1e-10 * max(1.0, np.linalg.norm(b)):
                return v + dv
        raise ValueError("no velocities satisfy the velocity constraints at the initial state")

    def _rigid_modes(self, q) -> tuple[np.ndarray, list[np.ndarray]]:
        """``T`` (n, k): the bodies' rigid motions at ``q`` as columns (each body's block of
        :meth:`~ancf_beam.mbs.bodies.Body.rigid_velocity_modes` on its coordinates), and the
        blocks."""
        blocks = [b.rigid_velocity_modes(q[b.offset : b.offset + b.n_dof]) for b in self.bodies]
        tmat = np.zeros((self.n, sum(tb.shape[1] for tb in blocks)))
        col = 0
        for b, tb in zip(self.bodies, blocks, strict=True):
            tmat[b.offset : b.offset + b.n_dof, col : col + tb.shape[1]] = tb
            col += tb.shape[1]
        return tmat, blocks

    def assemble_rigidly(self, q, t: float = 0.0, tol: float = 1e-12, max_iter: int = 50):
        """``q`` moved onto ``Phi(q, t) = 0`` by rigid motions of the beams (and any motion of
        the rigid bodies and point masses): Gauss-Newton in those motions, the kinetic-energy
        norm, each beam's step applied as an exact rotation about its node 0 plus a
        translation, so that its shape (strains, curvatures) is the given one. Returns the
        positions, or None when the rigid motions do not meet the joints within ``max_iter``
        iterations (a beam that must deform to fit; :meth:`project_positions` then)."""
        self._prep(t)
        q = np.array(q, dtype=float)
        mass = self.mass_dense()
        for _ in range(max_iter):
            c = self.constraints(q, None, t)
            phi = c["phi"]
            if not np.all(np.isfinite(phi)):
                return None
            if np.max(np.abs(phi), initial=0.0) <= tol:
                return q
            tmat, blocks = self._rigid_modes(q)
            try:
                dw = _reduced_correction(c["jacobian"], tmat, mass, -phi)
            except np.linalg.LinAlgError:
                return None
            col = 0
            for b, tb in zip(self.bodies, blocks, strict=True):
                k = tb.shape[1]
                qb = q[b.offset : b.offset + b.n_dof]
                if isinstance(b, BeamBody):
                    _move_beam_rigidly(qb, dw[col], dw[col + 1], dw[col + 2])
                else:
                    qb += tb @ dw[col : col + k]
                col += k
        return None

    def project_positions(self, q, t: float = 0.0, tol: float = 1e-12, max_iter: int = 20):
        """Mass-weighted Gauss-Newton projection of ``q`` onto ``Phi(q, t) = 0``."""
        w = self._prep(t)
        q = np.array(q, dtype=float)
        res = core.project_position(q, t, self.data, w, tol, max_iter)
        if not res <= tol:  # NaN included (a singular projection)
            raise ValueError(f"position projection did not converge (max|Phi| = {res:.3e})")
        return q

    def reactions(self, lam: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray | None]:
        """Per joint: the force (N) it applies to its first body, from one state's
        multipliers (see :mod:`ancf_beam.mbs.joints` for the sign convention)."""
        out = {}
        for j in self.joints:
            sl = lam[j.first_row : j.first_row + len(j.rows)]
            out[j.name] = j.reaction_force(sl, q)
        return out

    def describe(self) -> dict:
        return {
            "bodies": [f"{b.name} ({type(b).__name__}, {b.n_dof} dof)" for b in self.bodies],
            "joints": [j.name for j in self.joints],
            "equations": list(self.row_labels),
            "n_dof": self.n,
            "n_equations": self.m,
            "unilateral": [f.name for f in self.unilateral],
            "low_rank_forces": [
                f.name for f, k in zip(self.forces, self.fslot, strict=True) if k >= 0
            ],
        }


def _lowrank_dense(lr: tuple, n: int) -> np.ndarray:
    """``U B U^T`` of the low-rank slots of ``lr`` as a dense ``(n, n)`` matrix."""
    _, uc, uv, un, ub = lr[:5]
    out = np.zeros((n, n))
    for s in range(ub.shape[0]):
        u = np.zeros((n, 2))
        for c in range(2):
            np.add.at(u[:, c], uc[s, c, : un[s, c]], uv[s, c, : un[s, c]])
        b = np.array([[ub[s, 0], ub[s, 1]], [ub[s, 1], ub[s, 2]]])
        out += u @ b @ u.T
    return out


#: the least number of beam entries of a system's constant data
MIN_BEAM_ENTRIES = 2


def beam_entries(n_beams: int) -> int:
    """The number of beam entries of a system of ``n_beams`` beams: at least
    :data:`MIN_BEAM_ENTRIES`, else the next power of two. The entries are one tuple type for
    numba, whose length is part of every kernel's signature: every count compiles the
    multibody kernels anew (a minute of CPU). Padding with dummy entries (no coordinates,
    adding nothing) lets the rigid, one-beam and two-beam mechanisms share one compilation,
    and bounds the variants of larger ones (3-4, 5-8, ...). The kernels loop over the real
    beams only (their count is an item of the constant data): reading an entry counts a
    reference of each of its arrays. For the same reason the damage states are entries of
    their own, read only by the damage update."""
    return max(MIN_BEAM_ENTRIES, 1 << max(0, n_beams - 1).bit_length())


def _soa_entry(kargs, le: float, damage: bool) -> tuple:
    """``(layout, (le, ea_t, ei_t, eps0_t, kap0_t, x, g))`` of a beam's elastic force in
    :func:`ancf_beam.mbs.core.system_forces`: layout 0 the element-major kernel
    (:func:`ancf_beam.beam.kernels.elastic_force`), 1 and 2 the structure-of-arrays kernels
    (:func:`~ancf_beam.beam.kernels.soa_force_fixed`, flat rows of fixed length, and
    :func:`~ancf_beam.beam.kernels.soa_force_split`), which vectorise over the elements: the
    same force up to the order of summation, about a quarter of the time at 16 elements.
    :func:`ancf_beam.beam.kernels.soa_args` decides (off for the linear model, with damage,
    below 8 elements); rules with the same axial and bending points take the split kernel
    (one beam tuple type for every beam: no tuple of Gauss-point indices)."""
    if kargs is None:
        sa = kernels.soa_args(_dummy_kernel_args(), 1.0, False, force=False)
    else:
        sa = kernels.soa_args(kargs, le, damage)
    layout = 0 if not sa.on else (1 if sa.x.shape[0] == 1 else 2)
    return layout, (float(sa.le), sa.ea_t, sa.ei_t, sa.eps0_t, sa.kap0_t, sa.x, sa.g)


def _reduced_correction(jac, tmat, mass, rhs) -> np.ndarray:
    """``dw`` of the least change ``T dw`` in the kinetic-energy norm (``T^T M T``) with
    ``J T dw = rhs`` (least squares when the rows depend); raises ``LinAlgError`` when
    ``T^T M T`` is singular."""
    jr = jac @ tmat
    minv_jt = np.linalg.solve(tmat.T @ mass @ tmat, jr.T)
    return minv_jt @ np.linalg.lstsq(jr @ minv_jt, rhs, rcond=None)[0]


def _move_beam_rigidly(qb: np.ndarray, dx: float, dy: float, dth: float) -> None:
    """Rotate the beam coordinates ``qb`` (in place) by ``dth`` about node 0, then translate
    them by ``(dx, dy)``: the step of :meth:`System.assemble_rigidly` along the beam's rigid
    modes (:meth:`~ancf_beam.mbs.bodies.BeamBody.rigid_velocity_modes`), taken exactly."""
    c, s = math.cos(dth), math.sin(dth)
    r = qb.reshape(-1, 2)  # rows: node positions and slopes, alternately
    x0, y0 = float(qb[0]), float(qb[1])
    rel = r.copy()
    rel[0::2, 0] -= x0
    rel[0::2, 1] -= y0
    r[:, 0] = c * rel[:, 0] - s * rel[:, 1]
    r[:, 1] = s * rel[:, 0] + c * rel[:, 1]
    r[0::2, 0] += x0 + dx
    r[0::2, 1] += y0 + dy


def _dummy_kernel_args():
    z = np.zeros((1, 4))
    w = np.zeros((1, 1))
    return (0, z, z.copy(), z.copy(), w, w.copy(), w.copy(), w.copy(), False)


def _dummy_damage_args():
    z = np.zeros((1, 4))
    w = np.zeros((1, 1))
    return (
        0,
        z,
        z.copy(),
        w,
        w.copy(),
        False,
        w.copy(),
        0.0,
        1.0,
        0.0,
        w.copy(),
        w.copy(),
        w.copy(),
        w.copy(),
        w.copy(),
        w.copy(),
    )
