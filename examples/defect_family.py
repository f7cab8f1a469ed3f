"""A defect family: the seed beam softened by ``E(x) = E0 (1 - lam (x/L)^n)``.

For ``lam`` from 0 to 0.8 and ``n = 1`` (linear loss towards the tip) and ``n = 2``: the static
tip deflection under self-weight and the first natural frequency, each relative to the uniform
beam (``q L^4 / (8 E0 I)`` = 1.395 mm, ``omega_1`` = 104.24 rad/s). By the moment-area
theorem the linear tip deflection is ``4 int_0^1 (1 - u)^3 / (1 - lam u^n) du`` times the
uniform one: the softening sits where the bending moment is small, so ``lam = 0.8`` deflects
only 1.228x (``n = 1``) and 1.066x (``n = 2``) more; ``omega_1`` falls to 0.907x and 0.971x.

Independent references (see ``tests/test_examples.py``): that quadrature
(``ancf_beam.references.transfer.exact_graded_static``) and the stepped-beam transfer matrix
(segment-wise exact Euler-Bernoulli solutions) for the frequencies, both written without the
finite-element code and fed with the profile ``E0 I (1 - lam (x/L)^n)`` directly.
"""

import sys

import numpy as np

import ancf_beam as ab

LAMS = np.array([0.0, 0.2, 0.4, 0.6, 0.8])
EXPONENTS = (1.0, 2.0)


def main(figure: str | None = None) -> dict:
    """Statics and the first mode of every member; return arrays over ``LAMS`` (SI units)."""
    numbers: dict = {"lam": LAMS}
    for n in EXPONENTS:
        tips, omegas = [], []
        for lam in LAMS:
            case = ab.resolve_case(overrides={"defect.lam": lam, "defect.n": n})  # 20 elements
            beam = ab.BeamModel(case)
            tips.append(-ab.solve_static(beam).tip_y)
            omegas.append(ab.modal_analysis(beam, n_modes=1).omega[0])
        numbers[f"tip_deflection_n{n:g}"] = np.array(tips)  # m
        numbers[f"omega_1_n{n:g}"] = np.array(omegas)  # rad/s
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
        for n in EXPONENTS:
            tip, om = numbers[f"tip_deflection_n{n:g}"], numbers[f"omega_1_n{n:g}"]
            a1.plot(LAMS, tip / tip[0], "o-", label=f"n = {n:g}")
            a2.plot(LAMS, om / om[0], "o-", label=f"n = {n:g}")
        a1.set(xlabel="lam", ylabel="tip deflection / uniform", title="Static tip")
        a2.set(xlabel="lam", ylabel="omega_1 / uniform", title="First frequency")
        a1.legend()
        fig.savefig(figure, dpi=110)
    return numbers


if __name__ == "__main__":
    np.set_printoptions(precision=6)
    for key, value in main(sys.argv[1] if len(sys.argv) > 1 else "defect_family.png").items():
        print(f"{key}: {value}")
