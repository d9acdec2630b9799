# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Scorecard
#
# Every reproduction target of every source, with the verdict its chapter reached **in this build**.
# The page reads the claim records that the chapters wrote while they executed (it is built after
# all of them) and the committed verdict registry `verdicts/`.
#
# - **reproduced**: every check of the target passed; **reproduced, source erratum shown**: every
#   failing check is registered as an erratum or an unstated convention of the source (see the
#   {doc}`appendix/errata`); **partly**: some checks passed; **not reproduced**: none did;
#   **illustration**: the source's figure has nothing to compute (the registry says why);
#   **not attempted**: no chapter checks this target yet.
# - Every failing check carries its registered cause: *erratum*, *convention*, *method* (an effect of
#   this book's own computation: finite step, finite scale, reduced budget), *spec* (the specification's
#   criterion, not the source's claim) or *not-reproduced* (cause unknown, with what was tried).
# - A target's checks are listed under the table, with the source's value and the measured one.
# - The same data is in the built site as `scorecard.json` (linked below the table), whose JSON schema
#   is `shallowflow.claims.SCORECARD_SCHEMA` (checked by the site test).

# %% tags=["parameters", "remove-cell"]
profile = "book"  # which claim records to read

# %% tags=["remove-input"]
from IPython.display import HTML, display

from shallowflow import claims as C
from shallowflow.params import PROFILE, validate

P = validate(globals(), {"profile": PROFILE})
rows = C.scorecard(P.profile)
not_run = [f"{r['source']}:{r['target']}" for r in rows if r["verdict"] == "not run"]
if not_run:
    raise RuntimeError(f"targets with registered checks but no record in this build: {not_run}")
registry = C.load_registry()
C.write_scorecard_json(rows, registry, P.profile)
display(HTML(C.scorecard_html(rows, registry)
             + '<p>As data: <a href="../scorecard.json"><code>scorecard.json</code></a> (this build, profile '
             + P.profile + ').</p>'))

# %% [markdown]
# ## Checks of every attempted target

# %% tags=["remove-input"]
display(HTML(C.checks_html(rows)))
