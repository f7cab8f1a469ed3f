"""Two-body impact: two masses meet through a compliant contact law (case ``impact_seed003``).

Two point masses on the x axis, m1 = 2 kg at 1 m/s towards m2 = 3 kg at rest, touching at
t = 0 (effective mass 1.2 kg), meet through a Kelvin-Voigt contact ``F = k d + c d'`` with
``k = 1e7`` N/m and ``c = 200`` N s/m (damping ratio ``zeta = c / (2 sqrt(k m))`` = 0.029). The
force is never tensile: the contact ends when ``k d + c d'`` returns to zero. The same impact
then runs with a Hertz law ``F = K d^1.5`` (``K = 1e10`` N/m^1.5, elastic: restitution 1).
Adaptive DOP853 (rtol 1e-11) locates the contact onset and the end of the positive force as
events.

Expected from the closed forms of ``ancf_beam.references.impact`` (no multibody code): the
clipped Kelvin-Voigt impact's restitution 0.914791 and duration 1.06872 ms (the unclipped
damped half-period would give 0.913266 and 1.08873 ms); Hertz: largest penetration
``(5 m v^2 / (4 K))^(2/5)`` and duration ``2.9432 d_max / v``.
"""

import sys
from pathlib import Path

import ancf_beam as ab

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
HERTZ = {"contact.law": "hertz", "contact.K": 1e10, "contact.k": None, "contact.c": None}
KEYS = ("restitution", "contact_duration", "max_penetration", "max_contact_force")


def main(figure: str | None = None) -> dict:
    """Run both laws; return restitution, duration (s), penetration (m), force (N) of each."""
    config = ab.load_config(CONFIG)
    kv, kv_hist = ab.run_mechanism(ab.resolve_mechanism(config, "impact_seed003"))
    hz, hz_hist = ab.run_mechanism(ab.resolve_mechanism(config, "impact_seed003", HERTZ))
    numbers = {f"kelvin_voigt_{k}": kv[k] for k in KEYS}
    numbers.update({f"hertz_{k}": hz[k] for k in KEYS})
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 3.8), layout="constrained")
        for name, h in (("Kelvin-Voigt (k, c)", kv_hist), ("Hertz K d^1.5", hz_hist)):
            d = h.penetration[:, 0] * 1e3
            ax.plot(d[d > 0], h.contact_force_normal[:, 0][d > 0] / 1e3, label=name)
        ax.set(xlabel="penetration (mm)", ylabel="normal force (kN)", title="Force-penetration")
        ax.legend()
        fig.savefig(figure, dpi=110)
    return numbers


if __name__ == "__main__":
    for key, value in main(sys.argv[1] if len(sys.argv) > 1 else "two_body_impact.png").items():
        print(f"{key}: {value:.9g}")
