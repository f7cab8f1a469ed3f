"""Snakemake adapter: reports/index.html linking every report with the PASS counts of their
tables of checks (each notebook writes its table to reports/checks/*.csv)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import datetime as dt
import html
import os

import pandas as pd

import ancf_beam

out = snakemake.output[0]
base = os.path.dirname(out)


def rel(path):
    return os.path.relpath(path, base)


rows = []
titles = {
    "comparison": "Comparison of all cases",
    "convergence": "Mesh convergence",
    "critical_dt": "Critical time step",
    "validation": "Validation",
    "integrators": "Time integrators: accuracy, cost, recommendation",
    "defects": "Defect families: shapes, curvature concentration, spectra, damage",
    "identification": "Defect identification from noisy frequencies",
    "scaling": "Cost against the mesh: explicit vs implicit",
}
inp = snakemake.input
for case, page, checks in zip(snakemake.params.cases, inp.case_html, inp.case_checks, strict=True):
    rows.append((f"Case {case}", page, checks))
for name, page, checks in zip(snakemake.params.reports, inp.agg_html, inp.agg_checks, strict=True):
    rows.append((titles.get(name, name), page, checks))

total = passed = 0
body = []
for title, page, checks in rows:
    df = pd.read_csv(checks)
    n = len(df)
    k = int((df["status"] == "PASS").sum())
    total += n
    passed += k
    failed = df.loc[df["status"] != "PASS", "check"].astype(str).tolist()
    state = "PASS" if k == n else "FAIL"
    body.append(
        f"<tr><td><a href='{html.escape(rel(page))}'>{html.escape(title)}</a></td>"
        f"<td>{k} / {n}</td><td class='{state}'>{state}</td>"
        f"<td>{html.escape('; '.join(failed))}</td></tr>"
    )

overall = "PASS" if passed == total else "FAIL"
summary = pd.read_csv(inp.summary)
page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ancf-beam reports</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 70em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #bbb; padding: 4px 8px; }}
.PASS {{ color: #060; font-weight: bold; }} .FAIL {{ color: #b00; font-weight: bold; }}
</style></head><body>
<h1>Gradient-defect ANCF cantilever: reports</h1>
<p class="{overall}">Overall: {passed} of {total} checks PASS ({overall}).</p>
<p>{len(summary)} cases; package ancf_beam {ancf_beam.__version__};
generated {dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}.
Parameter record table: <a href="{html.escape(rel(inp.summary))}">summary.csv</a>.</p>
<table><tr><th>report</th><th>checks PASS</th><th>status</th><th>failed checks</th></tr>
{chr(10).join(body)}
</table></body></html>
"""
with open(out, "w") as fh:
    fh.write(page)
