"""Cost model of the explicit element-step (run on demand, not in CI; no Exudyn needed).

1. Floating-point operations per element-step, *counted* by replaying the pure-Python source of
   the numba kernels (``.py_func``) on arrays of a counting float type: ``kernels.elastic_force``
   (per axial and per bending Gauss point, per element; the structure-of-arrays kernel, which
   the explicit loop runs from ``kernels.SOA_MIN_ELEMENTS`` elements on, does the same
   operations for rules with different points), ``kernels._soa_point`` (one point of a rule
   whose axial and bending points are the same, e.g. 3/3: ``r'`` and ``|r'|^2`` shared by the
   two terms, so fewer operations than an axial plus a bending point), ``linalg.solve_xy_rows``
   (per free DOF) and the vector updates of ``explicit.run_chunk`` (counted by hand, 4 per free
   DOF). Padding elements of the vectorised loops are not counted as useful work.
   Convention: every +, -, *, /, sqrt is one flop (a fused multiply-add is two); negations are
   free (folded into the next operation by the compiler).
2. This machine's single-core peak: clock x FMA pipes x doubles per SIMD operation x 2, from
   /proc/cpuinfo and lscpu, with the assumptions printed.
3. Where the time goes: the force kernel, the mass solve and the vector updates timed separately
   in numba loops, the sampled output (tip, energies) from two full runs, against a full
   ``simulate_explicit`` step; achieved GFLOP/s and the fraction of the peak.

    python benchmarks/cost_model.py [--meshes 10,20,40,80] [--gauss 3/3,5/3] [--ghz 2.6]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import time
from collections import Counter

import numpy as np
from benchcommon import machine_note, our_model
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.linalg import row_factor, solve_xy_rows
from ancf_beam.solvers.explicit import simulate_explicit

UPDATE_FLOPS_PER_DOF = 4  # explicit.run_chunk: r = dt2 * (f + g) (2), dlt += r (1), q += dlt (1)


# ------------------------------------------------------------------------------------------
# 1. flop counting by replaying the kernels' Python source
# ------------------------------------------------------------------------------------------
class Flops:
    """Counter of floating-point operations by kind."""

    def __init__(self) -> None:
        self.ops: Counter[str] = Counter()

    def total(self) -> int:
        return sum(v for k, v in self.ops.items() if k != "neg")


class CFloat:
    """A float that records every arithmetic operation in a shared :class:`Flops`."""

    __slots__ = ("v", "c")

    def __init__(self, v: float, c: Flops):
        self.v = float(v)
        self.c = c

    @staticmethod
    def _val(x):
        return x.v if isinstance(x, CFloat) else float(x)

    def _op(self, kind: str, v: float) -> CFloat:
        self.c.ops[kind] += 1
        return CFloat(v, self.c)

    def __add__(self, o):
        return self._op("add", self.v + self._val(o))

    __radd__ = __add__

    def __sub__(self, o):
        return self._op("add", self.v - self._val(o))

    def __rsub__(self, o):
        return self._op("add", self._val(o) - self.v)

    def __mul__(self, o):
        return self._op("mul", self.v * self._val(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._op("div", self.v / self._val(o))

    def __rtruediv__(self, o):
        return self._op("div", self._val(o) / self.v)

    def __neg__(self):
        return self._op("neg", -self.v)

    def sqrt(self):  # np.sqrt on an object array element calls this
        return self._op("sqrt", math.sqrt(self.v))

    def __float__(self):
        return self.v


def _wrap(a: np.ndarray, c: Flops) -> np.ndarray:
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = CFloat(a[idx], c)
    return out


def count_force(n_el: int, gauss: tuple[int, int]) -> Counter:
    """Operations of one ``elastic_force`` call on a bent state (nonlinear strain)."""
    m = our_model(n_el, gauss)
    q = m.reference()
    q[1::4] = -1e-3 * m.x_nodes**2  # a bent state; the op count does not depend on the values
    q[3::4] = -2e-3 * m.x_nodes
    c = Flops()
    args = [
        _wrap(q, c),
        m.n_el,
        _wrap(m.spa, c),
        _wrap(m.spb, c),
        _wrap(m.sppb, c),
        _wrap(m.ea_w, c),
        _wrap(m.ei_w, c),
        _wrap(m.eps0, c),
        _wrap(m.kap0, c),
        m.linear,
    ]
    c.ops.clear()  # wrapping does not count
    f = np.empty(m.n_dof, dtype=object)
    helpers = ("_axial_element", "_bending_element")
    saved = {h: getattr(kernels, h) for h in helpers}
    try:  # replay the helpers' Python source too
        for h in helpers:
            setattr(kernels, h, saved[h].py_func)
        e = kernels.elastic_force.py_func(*args, f)
    finally:
        for h in helpers:
            setattr(kernels, h, saved[h])
    ref = np.empty(m.n_dof)
    e_ref = kernels.elastic_force(q, *m.kernel_args(), ref)
    got = np.array([float(x) for x in f])
    assert np.allclose(got, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max()), "replay mismatch"
    assert math.isclose(float(e), e_ref, rel_tol=1e-9)
    return c.ops


def count_shared_point() -> Counter:
    """Operations of one ``kernels._soa_point`` (axial and bending term at the same point)."""
    m = our_model(8, (3, 3))
    sa = kernels.soa_args(m.kernel_args(), m.le, False, force=True)
    c = Flops()
    t = tuple(_wrap(a, c) for a in (m.spb, m.sppb, sa.ea_t, sa.ei_t, sa.eps0_t, sa.kap0_t))
    e_val = (0.0, 0.0, 1.0, -1e-3, m.le, -2e-4, 1.0, -2e-3)  # element 0 of a bent state
    e = tuple(CFloat(v, c) for v in e_val)
    acc = tuple(CFloat(0.0, c) for _ in range(8))
    c.ops.clear()
    got, en = kernels._soa_point.py_func(1, t, 0, e, acc, CFloat(0.0, c))
    t_ref = (m.spb, m.sppb, sa.ea_t, sa.ei_t, sa.eps0_t, sa.kap0_t)
    ref, en_ref = kernels._soa_point(1, t_ref, 0, e_val, (0.0,) * 8, 0.0)
    assert np.allclose([float(v) for v in got], ref, rtol=1e-12), "replay mismatch"
    assert math.isclose(float(en), en_ref, rel_tol=1e-12)
    return c.ops


def _row_factors(m):
    cbx, cby, _, _ = m.mass_cholesky_xy
    return row_factor(cbx), row_factor(cby)


def count_solve(n_el: int) -> Counter:
    """Operations of one ``solve_xy_rows`` call (reduced mass, ``4 n_el`` unknowns)."""
    m = our_model(n_el)
    rx, ry = _row_factors(m)
    c = Flops()
    b = np.linspace(1.0, 2.0, m.n_free)
    w = [_wrap(a, c) for a in (rx, ry, b)]
    z = [np.empty(rx.shape[0], dtype=object) for _ in range(2)]
    c.ops.clear()
    solve_xy_rows.py_func(*w, *z)
    ref = b.copy()
    solve_xy_rows(rx, ry, ref, np.empty(rx.shape[0]), np.empty(rx.shape[0]))
    assert np.allclose([float(v) for v in w[2]], ref, rtol=1e-10)
    return c.ops


def per_point_counts(gauss_list) -> dict:
    """Per Gauss point (axial, bending), per element overhead, per element of the solve."""
    # difference of two rules isolates the per-point cost
    ne = 8
    c33 = count_force(ne, (3, 3))
    c43 = count_force(ne, (4, 3))
    c34 = count_force(ne, (3, 4))
    tot = {
        k: sum(v for kk, v in d.items() if kk != "neg")
        for k, d in (("33", c33), ("43", c43), ("34", c34))
    }
    ax = {k: (c43[k] - c33[k]) / ne for k in ("add", "mul", "div", "sqrt")}
    be = {k: (c34[k] - c33[k]) / ne for k in ("add", "mul", "div", "sqrt")}
    per_ax = (tot["43"] - tot["33"]) / ne
    per_be = (tot["34"] - tot["33"]) / ne
    per_el = tot["33"] / ne - 3 * per_ax - 3 * per_be
    s_small, s_big = count_solve(8), count_solve(16)
    solve_per_el = (sum(s_big.values()) - sum(s_small.values())) / 8
    solve_const = sum(s_small.values()) - 8 * solve_per_el
    out: dict = {
        "axial_point": per_ax,
        "axial_kinds": ax,
        "bending_point": per_be,
        "bending_kinds": be,
        "element_overhead": per_el,
        "solve_per_element": solve_per_el,
        "solve_constant": solve_const,
        "solve_kinds": {k: (s_big[k] - s_small[k]) / 8 for k in ("add", "mul", "div")},
        "update_per_element": 4 * UPDATE_FLOPS_PER_DOF,
    }
    shared = count_shared_point()
    out["shared_point"] = sum(v for k, v in shared.items() if k != "neg")
    out["shared_kinds"] = {k: shared[k] for k in ("add", "mul", "div", "sqrt")}
    # cross-check the model on other meshes/rules against a direct count
    for g in gauss_list:
        for n in (5, 13):
            direct = sum(v for k, v in count_force(n, g).items() if k != "neg")
            model = n * (g[0] * per_ax + g[1] * per_be + per_el)
            assert abs(direct - model) < 1e-9, (g, n, direct, model)
    return out


def flops_per_element_step(pc: dict, gauss: tuple[int, int], n_el: int) -> dict:
    """Counted flops per element-step of the kernels the explicit loop runs (structure of
    arrays; rules with the same points share r' between the axial and the bending term)."""
    if gauss[0] == gauss[1]:  # Gauss-Legendre rules of equal length have the same points
        force = gauss[1] * pc["shared_point"] + pc["element_overhead"]
    else:
        force = gauss[0] * pc["axial_point"] + gauss[1] * pc["bending_point"]
        force += pc["element_overhead"]
    solve = pc["solve_per_element"] + pc["solve_constant"] / n_el
    upd = pc["update_per_element"]
    return {"force": force, "solve": solve, "update": upd, "total": force + solve + upd}


# ------------------------------------------------------------------------------------------
# 2. peak of one core
# ------------------------------------------------------------------------------------------
def _cpuinfo() -> dict:
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if ":" in line:
                    k, v = line.split(":", 1)
                    info.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                info.setdefault("lscpu " + k.strip(), v.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def single_core_peak(ghz_override: float | None = None) -> dict:
    """Double-precision peak of one core and the assumptions behind it."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    vendor = info.get("vendor_id", info.get("lscpu Vendor ID", "?"))
    family = int(info.get("cpu family", "0") or 0)
    model = int(info.get("model", "0") or 0)
    notes = []
    # clock: lscpu max MHz if the hypervisor exposes it, else /proc/cpuinfo's cpu MHz
    ghz = None
    src = ""
    if ghz_override:
        ghz, src = ghz_override, "--ghz"
    elif info.get("lscpu CPU max MHz"):
        ghz, src = float(info["lscpu CPU max MHz"]) / 1000, "lscpu CPU max MHz"
    elif info.get("cpu MHz"):
        ghz, src = float(info["cpu MHz"]) / 1000, "/proc/cpuinfo cpu MHz (no max MHz exposed)"
    else:
        ghz, src = 2.0, "unknown; assumed"
    # SIMD width of the floating-point pipes (doubles per operation) and FMA pipes
    if "avx512f" in flags:
        width = 8
        isa = "AVX-512"
    elif "avx2" in flags or "avx" in flags:
        width, isa = 4, "AVX2" if "avx2" in flags else "AVX"
    else:
        width, isa = 2, "SSE2"
    fma_pipes = 2 if "fma" in flags else 1
    if vendor == "AuthenticAMD" and family == 25 and width == 8:
        # Zen 4 executes 512-bit operations on two 256-bit pipes (double pumping)
        width = 4
        notes.append(
            f"AMD family 25 model {model} (Zen 4): AVX-512 is executed as 2 x 256 bit, so 4 "
            "doubles per pipe per cycle"
        )
    notes.append(f"{fma_pipes} FMA pipes ({'fma flag' if fma_pipes == 2 else 'no fma flag'})")
    flops_cycle = fma_pipes * width * 2
    scalar_cycle = fma_pipes * 2
    notes.append(f"clock {ghz:.3f} GHz from {src}; turbo/boost not visible in this VM")
    return {
        "ghz": ghz,
        "isa": isa,
        "width": width,
        "fma_pipes": fma_pipes,
        "flops_per_cycle": flops_cycle,
        "peak_gflops": ghz * flops_cycle,
        "scalar_peak_gflops": ghz * scalar_cycle,
        "notes": notes,
        "cpu": info.get("model name", platform.processor()),
    }


# ------------------------------------------------------------------------------------------
# 3. timing split
# ------------------------------------------------------------------------------------------
@njit(cache=True)
def _force_loop(q, n, kargs, sa, f):
    """The force evaluation of ``explicit.run_chunk`` (tuples unpacked once, as there)."""
    n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear = kargs
    soa, le, ea_t, ei_t, eps0_t, kap0_t, xs, gs, gb = sa
    s = 0.0
    for _ in range(n):
        if soa and xs.shape[0] == 1:
            s += kernels.soa_force_fixed(
                q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, f
            )
        elif soa and len(gb) > 0:
            s += kernels.soa_force_same(
                q, n_el, le, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, gb, f
            )
        elif soa:
            s += kernels.soa_force_split(
                q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, f
            )
        else:
            s += kernels.elastic_force(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, f)
    return s


@njit(cache=True)
def _solve_loop(rx, ry, x, zx, zy, n):
    for _ in range(n):
        solve_xy_rows(rx, ry, x, zx, zy)


@njit(cache=True)
def _update_loop(q, dlt, r, f, g, dt2, n):
    """The per-step vector work of ``run_chunk`` outside force and solve."""
    nf = dlt.shape[0]
    for _ in range(n):
        for i in range(nf):
            r[i] = dt2 * (f[4 + i] + g[i])
        for i in range(nf):
            dlt[i] += r[i]
            q[4 + i] += dlt[i]


def _best(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def time_split(n_el: int, gauss: tuple[int, int], repeat: int = 3, el_steps: float = 4e6):
    """Per element-step seconds: force, solve, updates, output, full step (process CPU)."""
    from ancf_beam.solvers.modal import omega_max

    m = our_model(n_el, gauss)
    n = max(1000, int(el_steps / n_el))
    q = m.reference()
    q[1::4] = -1e-3 * m.x_nodes**2
    f = np.empty(m.n_dof)
    args = (m.kernel_args(), kernels.soa_args(m.kernel_args(), m.le, False))  # as run_chunk
    _force_loop(q, 2, *args, f)
    x = np.linspace(1.0, 2.0, m.n_free)
    rx, ry = _row_factors(m)
    ch = (rx, ry, x, np.empty(rx.shape[0]), np.empty(rx.shape[0]))
    _solve_loop(*ch, 2)
    dlt = np.zeros(m.n_free)
    r = np.zeros(m.n_free)
    g = m.gravity_free.copy()
    _update_loop(q.copy(), dlt, r, f, g, 1e-12, 2)
    tf = _best(lambda: _force_loop(q, n, *args, f), repeat) / n
    ts = _best(lambda: _solve_loop(*ch, n), repeat) / n
    qq = q.copy()
    tu = _best(lambda: _update_loop(qq, dlt, r, f, g, 1e-12, n), repeat) / n
    dt = 0.8 * 2.0 / omega_max(m)[0]
    te = n * dt

    def run(sample_dt):
        return simulate_explicit(m, te, dt, progress=False, sample_dt=sample_dt, snapshot_dt=te)

    t_default = _best(lambda: run(None), repeat) / n  # library default output (1e-4 s)
    t_quiet = _best(lambda: run(te), repeat) / n  # tip/energies only at t = 0 and t_end
    sample_every = max(1, int(round(m.case.dynamics.sample_dt / dt)))
    return {
        "force": tf / n_el,
        "solve": ts / n_el,
        "update": tu / n_el,
        "output": max(t_default - t_quiet, 0.0) / n_el,
        "loop": max(t_quiet - tf - ts - tu, 0.0) / n_el,
        "step": t_default / n_el,
        "steps": n,
        "sample_every": sample_every,
        "dt": dt,
    }


# ------------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meshes", default="10,20,40,80")
    ap.add_argument("--gauss", default="3/3,5/3", help="axial/bending Gauss rules to model")
    ap.add_argument("--ghz", type=float, default=None, help="override the clock (GHz)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--el-steps", type=float, default=4e6, help="element-steps per timing loop")
    args = ap.parse_args()
    meshes = [int(x) for x in args.meshes.split(",")]
    rules = [tuple(int(v) for v in g.split("/")) for g in args.gauss.split(",")]

    print("Cost model of the explicit element-step (ancf_beam), 1 thread")
    print(f"   machine: {machine_note()}")
    pc = per_point_counts(rules)
    ak, bk, sk = pc["axial_kinds"], pc["bending_kinds"], pc["solve_kinds"]

    def kinds(d):
        return ", ".join(f"{int(v)} {k}" for k, v in d.items() if v)

    print("\n== 1. Floating-point operations (counted by replaying the kernel source) ==")
    print(
        f"   elastic_force, per axial Gauss point:   {pc['axial_point']:5.0f} flops ({kinds(ak)})"
    )
    print(
        f"   elastic_force, per bending Gauss point: {pc['bending_point']:5.0f} flops ({kinds(bk)})"
    )
    print(
        f"   elastic_force, per element (f -= g):    {pc['element_overhead']:5.0f} flops "
        "(8 subtractions into the global vector)"
    )
    print(
        f"   solve_xy_rows, per element:             {pc['solve_per_element']:5.0f} flops "
        f"({kinds(sk)}; 4 unknowns/element, half-bandwidth 3 per component, forward + back; "
        f"{pc['solve_constant']:+.0f} per solve at the band ends)"
    )
    print(
        f"   run_chunk vector updates, per element: {pc['update_per_element']:5.0f} flops "
        f"({UPDATE_FLOPS_PER_DOF} per free DOF: r = dt^2 (f + g), dlt += r, q += dlt)"
    )
    print(
        f"   _soa_point (axial + bending, same point): {pc['shared_point']:5.0f} flops (against "
        f"{pc['axial_point'] + pc['bending_point']:.0f} for the two terms apart)"
    )
    print("   (+ every sample_every steps: central velocity, M v, kinetic and potential energy)")
    for g in rules:
        fl = flops_per_element_step(pc, g, 40)
        sk_ = pc["shared_kinds"]
        n_div = g[1] * sk_["div"] if g[0] == g[1] else g[0] * ak["div"] + g[1] * bk["div"]
        n_sqrt = g[1] * sk_["sqrt"] if g[0] == g[1] else g[0] * ak["sqrt"]
        terms = (
            f"{g[1]} x {pc['shared_point']:.0f} (same points)"
            if g[0] == g[1]
            else f"{g[0]} x {pc['axial_point']:.0f} + {g[1]} x {pc['bending_point']:.0f}"
        )
        print(
            f"   Gauss {g[0]}/{g[1]}: force {terms} + {pc['element_overhead']:.0f} = "
            f"{fl['force']:.0f}; + solve {fl['solve']:.0f} + updates {fl['update']:.0f} = "
            f"{fl['total']:.0f} flops per element-step (40 elements); divisions {n_div:.0f}, "
            f"square roots {n_sqrt:.0f}"
        )

    pk = single_core_peak(args.ghz)
    print("\n== 2. Single-core peak (double precision) ==")
    print(
        f"   {pk['cpu']}: {pk['ghz']:.3f} GHz x {pk['fma_pipes']} FMA pipes x {pk['width']} "
        f"doubles ({pk['isa']}) x 2 flops/FMA = {pk['flops_per_cycle']} flops/cycle = "
        f"{pk['peak_gflops']:.1f} GFLOP/s; scalar (no SIMD) peak {pk['scalar_peak_gflops']:.1f} "
        "GFLOP/s"
    )
    for note in pk["notes"]:
        print(f"   assumption: {note}")

    print(
        f"\n== 3. Where the time goes (ns per element-step, process CPU, best of {args.repeat}) =="
    )
    print(
        f"{'gauss':>5} {'n_el':>4} {'force':>7} {'solve':>7} {'update':>7} {'output':>7} "
        f"{'loop':>6} {'step':>7} {'Mel-st/s':>9} {'flops/el-st':>11} {'GFLOP/s':>8} "
        f"{'% peak':>7} {'% scalar':>8} {'force GF/s':>10} {'solve GF/s':>10}"
    )
    for g in rules:
        for ne in meshes:
            ts = time_split(ne, g, args.repeat, args.el_steps)
            fl = flops_per_element_step(pc, g, ne)
            gfl = fl["total"] / ts["step"] / 1e9
            print(
                f"{g[0]}/{g[1]:<3} {ne:>4d} {ts['force'] * 1e9:>7.1f} {ts['solve'] * 1e9:>7.1f} "
                f"{ts['update'] * 1e9:>7.1f} {ts['output'] * 1e9:>7.1f} {ts['loop'] * 1e9:>6.1f} "
                f"{ts['step'] * 1e9:>7.1f} {1e-6 / ts['step']:>9.2f} {fl['total']:>11.0f} "
                f"{gfl:>8.2f} {100 * gfl / pk['peak_gflops']:>6.1f}% "
                f"{100 * gfl / pk['scalar_peak_gflops']:>7.1f}% "
                f"{fl['force'] / ts['force'] / 1e9:>10.2f} {fl['solve'] / ts['solve'] / 1e9:>10.2f}"
            )
    print(
        "   force/solve/update: the kernels alone in tight numba loops; output: extra cost of "
        "the library's default sampling (tip + energies every 1e-4 s) over a run that samples "
        "only at the ends; loop: the rest of a quiet step (bookkeeping, calls); step: a full "
        "simulate_explicit step with default output. GFLOP/s = counted flops / step time."
    )
    print(
        f"   (numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'default')}; kernels are serial)"
    )


if __name__ == "__main__":
    main()
