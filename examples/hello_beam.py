"""Hello beam: the seed cantilever (steel, 1 m, 20 mm x 20 mm section) under its own weight.

Statics, the first natural frequency and 0.1 s of explicit dynamics from rest, through the public
API. Euler-Bernoulli: tip deflection q L^4 / (8 E I) = 1.395 mm, omega_1 = 104.24 rad/s; released
from rest, the tip swings down to about twice the static deflection.
"""

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.solvers import DynamicsSettings, modal_analysis, simulate, solve_static

case = resolve_case(overrides={"mesh.n_elements": 20})  # the built-in defaults: the seed case
beam = BeamModel(case)

static = solve_static(beam)
print(f"static tip deflection: {-static.tip_y * 1e3:.4f} mm (q L^4 / 8 E I = 1.395 mm)")

omega_1 = modal_analysis(beam, n_modes=1).omega[0]
print(f"first natural frequency: {omega_1:.2f} rad/s (Euler-Bernoulli: 104.24 rad/s)")

run = simulate(beam, DynamicsSettings.from_case(case, t_end=0.1), progress=False)
print(f"dynamic tip: largest deflection {-run.tip_y.min() * 1e3:.4f} mm, "
      f"{run.steps} central-difference steps of {run.dt:.3e} s")  # fmt: skip
