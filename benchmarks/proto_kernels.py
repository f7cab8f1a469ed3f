"""Prototype kernels for the explicit step (run on demand, not in CI; no Exudyn needed).

Prototypes (now in the library: ``force_soa`` as ``kernels.elastic_force_soa``, ``solve_rows``
as ``linalg.solve_xy_rows``): measured sketches of the ``src/`` changes proposed in
benchmarks/README.md ("What limits speed"), each checked against the library kernel it would
replace, so that the proposal comes with a number:

* ``force_soa``: the elastic force of ``kernels.elastic_force`` (same formulas, same Gauss rules,
  no strain energy) restructured so that the *inner* loop runs over elements with unit-stride
  structure-of-arrays data (coordinates transposed once per call, Gauss weights stored
  ``[g, el]``), which LLVM vectorises (4-8 elements per SIMD instruction, sqrt and division
  included). The energy is only needed on the sampled steps, where the library kernel can still
  be called.
* ``solve_rows``: the component-split banded mass solve of ``linalg.cho_solve_xy_inplace`` with
  the factor re-stored row by row and pre-scaled by the reciprocal diagonal, so the loop-carried
  dependency of each triangular sweep is one fused multiply-add per row (instead of the whole
  3-term dot product, a multiply and index arithmetic on the band storage).
* ``run_fused``: a central-difference loop using both (no output), against
  ``explicit.simulate_explicit`` at the same dt: same final state to round-off, element-steps/s.

Two compiler facts found on the way (numba 0.68 / LLVM, Zen 4):

* a float division in a numba kernel compiled with the default ``error_model='python'`` carries a
  ZeroDivisionError branch, and LLVM refuses to vectorise a loop containing it ("early exit");
  ``error_model='numpy'`` (IEEE inf/nan, caught by the stability guards; the library kernels use
  it too) removes it;
* the vectorised element loop of ``force_soa`` (8 wide) sits behind runtime alias checks between
  its 8 accumulator rows and 6 input rows, so LLVM only enters it from 32 elements on; below that
  the scalar library kernel is faster and ``run_fused`` uses it.

    python benchmarks/proto_kernels.py [--meshes 10,20,40,80] [--gauss 5/3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from benchcommon import machine_note, our_model
from numba import njit

from ancf_beam import linalg
from ancf_beam.beam import kernels
from ancf_beam.beam.model import CLAMP
from ancf_beam.solvers.explicit import simulate_explicit

FAST = kernels.FAST
# LLVM vectorises force_soa's element loops 8 wide (AVX-512 here), but behind ~2 x 8 x 8 runtime
# alias checks (8 accumulator rows written, 6 arrays read) that only pay from 32 iterations on.
SOA_MIN_ELEMENTS = 32


# ------------------------------------------------------------------------------------------
# force, structure of arrays, vectorised over elements
# ------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def force_soa(q, n_el, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, X, G, f):
    """``f = -dU/dq`` (full vector) without the strain energy. ``ea_t[g, el]``/``ei_t[g, el]``:
    weights transposed; ``X`` (4, n_el + 1) and ``G`` (8, n_el) are scratch arrays."""
    nn = n_el + 1
    for k in range(4):
        for nd in range(nn):
            X[k, nd] = q[4 * nd + k]
    for k in range(8):
        for el in range(n_el):
            G[k, el] = 0.0
    x0 = X[0]
    y0 = X[1]
    x1 = X[2]
    y1 = X[3]
    for g in range(spa.shape[0]):
        s0 = spa[g, 0]
        s1 = spa[g, 1]
        s2 = spa[g, 2]
        s3 = spa[g, 3]
        w_row = ea_t[g]
        e_row = eps0_t[g]
        for el in range(n_el):
            rx = s0 * x0[el] + s1 * x1[el] + s2 * x0[el + 1] + s3 * x1[el + 1]
            ry = s0 * y0[el] + s1 * y1[el] + s2 * y0[el + 1] + s3 * y1[el + 1]
            nrm = np.sqrt(rx * rx + ry * ry)
            c = w_row[el] * (nrm - 1.0 - e_row[el]) / nrm
            cx = c * rx
            cy = c * ry
            G[0, el] += s0 * cx
            G[1, el] += s0 * cy
            G[2, el] += s1 * cx
            G[3, el] += s1 * cy
            G[4, el] += s2 * cx
            G[5, el] += s2 * cy
            G[6, el] += s3 * cx
            G[7, el] += s3 * cy
    for g in range(spb.shape[0]):
        s0 = spb[g, 0]
        s1 = spb[g, 1]
        s2 = spb[g, 2]
        s3 = spb[g, 3]
        t0 = sppb[g, 0]
        t1 = sppb[g, 1]
        t2 = sppb[g, 2]
        t3 = sppb[g, 3]
        w_row = ei_t[g]
        k_row = kap0_t[g]
        for el in range(n_el):
            rx = s0 * x0[el] + s1 * x1[el] + s2 * x0[el + 1] + s3 * x1[el + 1]
            ry = s0 * y0[el] + s1 * y1[el] + s2 * y0[el + 1] + s3 * y1[el + 1]
            ddx = t0 * x0[el] + t1 * x1[el] + t2 * x0[el + 1] + t3 * x1[el + 1]
            ddy = t0 * y0[el] + t1 * y1[el] + t2 * y0[el + 1] + t3 * y1[el + 1]
            inv = 1.0 / (rx * rx + ry * ry)
            kabs = (rx * ddy - ry * ddx) * inv
            c = w_row[el] * (kabs - k_row[el]) * inv
            k2 = 2.0 * kabs
            ax = c * (ddy - k2 * rx)
            ay = -c * (ddx + k2 * ry)
            bx = -c * ry
            by = c * rx
            G[0, el] += s0 * ax + t0 * bx
            G[1, el] += s0 * ay + t0 * by
            G[2, el] += s1 * ax + t1 * bx
            G[3, el] += s1 * ay + t1 * by
            G[4, el] += s2 * ax + t2 * bx
            G[5, el] += s2 * ay + t2 * by
            G[6, el] += s3 * ax + t3 * bx
            G[7, el] += s3 * ay + t3 * by
    # gather to nodes: node nd gets the first half of element nd, the second half of nd - 1
    for k in range(4):
        f[k] = -G[k, 0]
    for nd in range(1, n_el):
        for k in range(4):
            f[4 * nd + k] = -(G[k, nd] + G[4 + k, nd - 1])
    for k in range(4):
        f[4 * n_el + k] = -G[4 + k, n_el - 1]


# ------------------------------------------------------------------------------------------
# mass solve with one FMA per row on the dependency chain
# ------------------------------------------------------------------------------------------
# (moved into the library: ancf_beam.linalg.row_factor / solve_xy_rows)
row_factor = linalg.row_factor
solve_rows = linalg.solve_xy_rows


# ------------------------------------------------------------------------------------------
# a fused central-difference loop (no output) with both prototypes
# ------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def run_fused(q, dlt, n_steps, dt, n_el, spa, spb, sppb, ea_t, ei_t, e0t, k0t, g, rx, ry, lib):
    """``n_steps`` central-difference steps in place; ``lib = (ea_w, ei_w, eps0, kap0)`` of the
    model: below ``SOA_MIN_ELEMENTS`` the library's scalar force kernel is used instead of
    :func:`force_soa` (whose vector loop only pays from 32 elements on, see the module notes)."""
    nf = dlt.shape[0]
    soa = n_el >= SOA_MIN_ELEMENTS
    dt2 = dt * dt
    X = np.empty((4, n_el + 1))
    G = np.empty((8, n_el))
    f = np.empty(q.shape[0])
    r = np.empty(nf)
    zx = np.empty(rx.shape[0])
    zy = np.empty(rx.shape[0])
    for _ in range(n_steps):
        if soa:
            force_soa(q, n_el, spa, spb, sppb, ea_t, ei_t, e0t, k0t, X, G, f)
        else:
            kernels.elastic_force(q, n_el, spa, spb, sppb, lib[0], lib[1], lib[2], lib[3], False, f)
        for i in range(nf):
            r[i] = dt2 * (f[CLAMP + i] + g[i])
        solve_rows(rx, ry, r, zx, zy)
        for i in range(nf):
            dlt[i] += r[i]
            q[CLAMP + i] += dlt[i]


def fused_runner(m, dt: float):
    """``run(n_steps)`` -> full coordinates after ``n_steps`` prototype steps from rest."""
    sa = soa_args(m)
    g = np.ascontiguousarray(m.gravity_free)
    a0 = np.linalg.solve(m.mass_dense(), m.elastic_force(m.reference())[CLAMP:] + g)
    rx, ry = (row_factor(c) for c in m.mass_cholesky_xy[:2])
    lib = (m.ea_w, m.ei_w, m.eps0, m.kap0)

    def run(n_steps: int) -> np.ndarray:
        q = m.reference()
        dlt = np.ascontiguousarray(-0.5 * dt * dt * a0)  # second-order start from rest
        run_fused(q, dlt, n_steps, dt, *sa, g, rx, ry, lib)
        return q

    return run


def soa_args(m):
    t = np.ascontiguousarray
    return (m.n_el, m.spa, m.spb, m.sppb, t(m.ea_w.T), t(m.ei_w.T), t(m.eps0.T), t(m.kap0.T))


@njit(cache=True)
def _lib_force_loop(q, n, n_el, spa, spb, sppb, ea, ei, e0, k0, lin, f):
    s = 0.0
    for _ in range(n):
        s += kernels.elastic_force(q, n_el, spa, spb, sppb, ea, ei, e0, k0, lin, f)
    return s


@njit(cache=True)
def _soa_force_loop(q, n, n_el, spa, spb, sppb, ea, ei, e0, k0, X, G, f):
    for _ in range(n):
        force_soa(q, n_el, spa, spb, sppb, ea, ei, e0, k0, X, G, f)


@njit(cache=True)
def _lib_solve_loop(cbx, cby, ix, iy, x, n):
    for _ in range(n):
        linalg.cho_solve_xy_inplace(cbx, cby, ix, iy, x)


@njit(cache=True)
def _rows_solve_loop(rx, ry, x, zx, zy, n):
    for _ in range(n):
        solve_rows(rx, ry, x, zx, zy)


def _best(fn, repeat):
    b = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        b = min(b, time.process_time() - t0)
    return b


def check_and_time(ne: int, gauss, repeat: int, el_steps: float) -> dict:
    from ancf_beam.solvers.modal import omega_max

    m = our_model(ne, gauss)
    n = max(1000, int(el_steps / ne))
    q = m.reference()
    q[1::4] = -0.05 * m.x_nodes**2  # a clearly bent state
    q[3::4] = -0.1 * m.x_nodes
    # force: agreement and time
    f_lib = np.empty(m.n_dof)
    kernels.elastic_force(q, *m.kernel_args(), f_lib)
    f_soa = np.empty(m.n_dof)
    X = np.empty((4, ne + 1))
    G = np.empty((8, ne))
    sa = soa_args(m)
    force_soa(q, *sa, X, G, f_soa)
    f_err = float(np.max(np.abs(f_soa - f_lib)) / np.max(np.abs(f_lib)))
    _lib_force_loop(q, 1, *m.kernel_args(), f_lib)  # compile / load outside the timing
    _soa_force_loop(q, 1, *sa, X, G, f_soa)
    t_lib_f = _best(lambda: _lib_force_loop(q, n, *m.kernel_args(), f_lib), repeat) / n / ne
    t_soa_f = _best(lambda: _soa_force_loop(q, n, *sa, X, G, f_soa), repeat) / n / ne
    # solve
    cbx, cby, ix, iy = m.mass_cholesky_xy
    rx, ry = row_factor(cbx), row_factor(cby)
    b = np.sin(np.arange(m.n_free) + 1.0)
    x1 = b.copy()
    linalg.cho_solve_xy_inplace(cbx, cby, ix, iy, x1)
    x2 = b.copy()
    zx = np.empty(rx.shape[0])
    zy = np.empty(rx.shape[0])
    solve_rows(rx, ry, x2, zx, zy)
    s_err = float(np.max(np.abs(x2 - x1)) / np.max(np.abs(x1)))
    xx = b.copy()
    _lib_solve_loop(cbx, cby, ix, iy, xx, 1)
    _rows_solve_loop(rx, ry, xx, zx, zy, 1)
    t_lib_s = _best(lambda: _lib_solve_loop(cbx, cby, ix, iy, xx, n), repeat) / n / ne
    t_rows_s = _best(lambda: _rows_solve_loop(rx, ry, xx, zx, zy, n), repeat) / n / ne
    # fused loop vs the library run (same dt, same number of steps, from rest)
    dt = 0.8 * 2.0 / omega_max(m)[0]
    n_steps = n
    te = n_steps * dt

    def lib():
        return simulate_explicit(m, te, dt, progress=False, sample_dt=te, snapshot_dt=te)

    simulate_explicit(m, 10 * dt, dt, progress=False)  # load the library's kernels
    t_lib = _best(lib, repeat)
    q_lib = lib().q_snap[-1]
    run = fused_runner(m, dt)

    def fused():
        return run(n_steps)

    run(2)
    t_fused = _best(fused, repeat)
    q_f = fused()
    tip_err = abs(q_f[-3] - q_lib[-3]) / abs(q_lib[-3])
    return {
        "f_err": f_err,
        "s_err": s_err,
        "t_lib_f": t_lib_f,
        "t_soa_f": t_soa_f,
        "t_lib_s": t_lib_s,
        "t_rows_s": t_rows_s,
        "lib_rate": ne * n_steps / t_lib,
        "fused_rate": ne * n_steps / t_fused,
        "tip_err": tip_err,
        "steps": n_steps,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meshes", default="10,20,40,80")
    ap.add_argument("--gauss", default="5/3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--el-steps", type=float, default=4e6)
    args = ap.parse_args()
    gauss = tuple(int(v) for v in args.gauss.split("/"))
    print(f"Prototype explicit kernels vs the library, Gauss {gauss[0]}/{gauss[1]}, 1 thread")
    print(f"   machine: {machine_note()}; process CPU time, best of {args.repeat}")
    print(
        f"{'n_el':>4} | {'force ns/el lib':>15} {'proto':>6} {'x':>5} {'max rel diff':>12} | "
        f"{'solve ns/el lib':>15} {'proto':>6} {'x':>5} {'max rel diff':>12} | "
        f"{'step Mel-st/s lib':>17} {'fused':>6} {'x':>5} {'tip rel diff':>12}"
    )
    for ne in [int(x) for x in args.meshes.split(",")]:
        r = check_and_time(ne, gauss, args.repeat, args.el_steps)
        print(
            f"{ne:>4d} | {r['t_lib_f'] * 1e9:>15.1f} {r['t_soa_f'] * 1e9:>6.1f} "
            f"{r['t_lib_f'] / r['t_soa_f']:>5.2f} {r['f_err']:>12.1e} | "
            f"{r['t_lib_s'] * 1e9:>15.1f} {r['t_rows_s'] * 1e9:>6.1f} "
            f"{r['t_lib_s'] / r['t_rows_s']:>5.2f} {r['s_err']:>12.1e} | "
            f"{r['lib_rate'] / 1e6:>17.2f} {r['fused_rate'] / 1e6:>6.2f} "
            f"{r['fused_rate'] / r['lib_rate']:>5.2f} {r['tip_err']:>12.1e}"
        )
    print(
        "   lib = ancf_beam kernels / simulate_explicit (output only at the ends); proto = this "
        "file; fused = force_soa (the library's scalar force below 32 elements) + solve_rows + "
        "updates in one numba loop without output. "
        "Force/solve columns: the kernel alone in a loop; max rel diff against the library "
        "kernel on a bent state; tip rel diff after the same number of steps from rest."
    )


if __name__ == "__main__":
    main()
