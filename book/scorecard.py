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
# - **reproduced**: every check of the target passed; **partly**: some did; **not reproduced**:
#   none did (each chapter says why); **not attempted**: no chapter checks this target yet.
# - A target's checks are listed under the table, with the source's value and the measured one.

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
display(HTML(C.scorecard_html(rows, C.load_registry())))

# %% [markdown]
# ## Checks of every attempted target

# %% tags=["remove-input"]
display(HTML(C.checks_html(rows)))
