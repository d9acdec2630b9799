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
# - **reproduced**: every check of the target passed. A failing check counts for the source only through
#   a registered cause **proved by evidence**: checks of the same source that pass in this build.
#   **reproduced, source erratum shown**: every failing check is a proved erratum or unstated convention
#   of the source (see the {doc}`appendix/errata`); **source claim false (erratum shown)**: an erratum's
#   evidence shows the claim itself false; **reproduced, book deviation shown**: every failing check is
#   proved to be the book's own (*method*: the same check passes at a smaller step or larger scale) or the
#   specification's (*spec*: the source's own claim passes as stated); **undecided at this scale**: a
#   failure the book's budget cannot decide (cause *scale*, with the paper profile that would decide it),
#   or a cause whose evidence does not hold at this scale; **partly**: some checks passed and a failure
#   has no proved cause; **not reproduced**: none passed; **illustration**: the source's figure has
#   nothing to compute; **not attempted**: no chapter checks this target yet.
# - Every failing check carries its registered cause: *erratum*, *convention*, *method*, *spec* (each
#   with the checks that prove it), *scale* (undecided at this scale) or *not-reproduced* (cause unknown,
#   with the parameter sets tried). Its why is generated from the measured values of this build.
# - A target's checks are listed under the table, with the source's value and the measured one.
# - The same data is in the built site as `scorecard.json` (linked below the table), whose JSON schema
#   is `shallowflow.verdicts.SCORECARD_SCHEMA` (checked by the site test).

# %% tags=["parameters", "remove-cell"]
profile = "book"  # which claim records to read

# %% tags=["remove-input"]
from IPython.display import HTML, display

from shallowflow import verdicts as C
from shallowflow.params import PROFILE, validate

P = validate(globals(), {"profile": PROFILE})
rows = C.scorecard(P.profile)
problems = C.scorecard_problems(rows, P.profile)
if problems:
    raise C.VerdictMismatch("the build's verdicts do not hold:\n  - " + "\n  - ".join(problems))
registry = C.load_registry()
C.write_scorecard_json(rows, registry, P.profile)
display(HTML(C.scorecard_html(rows, registry)
             + '<p>As data: <a href="../scorecard.json"><code>scorecard.json</code></a> (this build, profile '
             + P.profile + ').</p>'))

# %% [markdown]
# ## Checks of every attempted target

# %% tags=["remove-input"]
display(HTML(C.checks_html(rows)))
