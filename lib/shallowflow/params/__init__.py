"""Validation of chapter parameters: a bad value stops with a message naming the parameter.

Each chapter declares a schema, a dict from parameter name to :class:`Spec`, and validates the
values of its parameters cell (after papermill's injection) before any training::

    P = validate(globals(), SCHEMA, RULES)

Single values.  Every kind has bounds even where the schema gives none: integers fit a signed 64-bit
integer (so a seed of 2**70 is refused), numbers are finite, lists have ``min_len`` to ``max_len``
(default :data:`MAX_LEN`) items, strings at most :data:`STR_MAX` printable characters.  Booleans are
not integers, strings are not lists.  A list of seeds (``seeds``, ``sat_seeds``, ...: :func:`distinct_items`) has
distinct items: each seed is one run, and a copy would count as another.  A bad value raises :class:`ParameterError` with the
parameter's name, the value (its repr cut to :data:`REPR_MAX` characters) and what is accepted.

Relations.  :class:`Rule` objects relate several parameters and are checked after the single values;
four helpers build the common ones, each refusing with the numbers involved:

- :meth:`Rule.at_most` -- ``Rule.at_most("panels", "steps")``: every panel (the largest item of a
  list) is at most ``steps``;
- :meth:`Rule.budget` -- ``Rule.budget(("time", "lr"), lambda P: P.time / P.lr, 1e8, "iterations")``:
  a computed cost (here gradient-descent iterations) within a budget, so that a run cannot silently
  take days or overflow an integer;
- :meth:`Rule.work` -- a budget in work units (:func:`gd_work`: neuron x point x coordinate x step) against
  :func:`work_limit` (:data:`WORK_BUDGET` or ``SHALLOWFLOW_WORK_BUDGET``), the time limit of every chapter (all
  its experiments together);
- :meth:`Rule.memory` (also :func:`memory_rule`) -- ``Rule.memory(("width", "seeds"),
  lambda P: 8 * P.width * len(P.seeds) * P.steps)``: an estimate in bytes of the largest allocation,
  checked before allocating against :func:`memory_limit` (half the machine's memory, or
  ``SHALLOWFLOW_MEMORY_GB``).

Names.  In a notebook executed by papermill, the values papermill injected are read back from the
kernel's input history (the cell tagged ``injected-parameters`` starts with ``# Parameters``); a name
the schema does not declare (``-p widht 3``) is refused with the declared names.  A run whose values
differ from its profile's (the parameters-cell defaults for ``book``, ``params/<profile>/<part>/
<chapter>.yml`` over them for ``smoke`` and ``paper``) is returned with ``P.profile == "custom"``,
so its claims are recorded as a custom run, not as the profile's.

Sections and data.  :func:`Sections` is a chapter's ``sections`` parameter (a list of distinct names from its
parts); :func:`DataFile` a parameter naming one of a chapter's data sets or a ``.npz``/``.csv`` file, checked
(exists, readable, shape, finite, memory) before a kernel starts.

Dry plan.  After the rules, :func:`validate` calls the chapter module's ``plan(P)`` when it defines one
(:func:`dry_plan`): the chapter's lookups and shapes without training, so that an accepted combination either
runs or is refused in one line.
"""
# the package's names: the language (spec), a data file (datafile), a chapter's layout (chapters), validation
from . import chapters, datafile, spec, validation  # noqa: F401
from .datafile import DataFile, FileLimits  # noqa: F401
from .spec import (INT_MIN, INT_MAX, MAX_LEN, STR_MAX, REPR_MAX, GOT_MAX, STEP_BUDGET, ESTIMATE_KINDS,
    ensemble_bytes, WORK_BUDGET, STEP_OVERHEAD, array_bytes, gd_bytes, gd_work, ParameterError, short, Spec, Int,
    Float, Str, PROFILES, PROFILE, Bool, Ints, Seeds, distinct_items, Floats, Sections, _names, _scalar, _largest,
    memory_limit, work_limit, _bytes, Rule, memory_rule)  # noqa: F401
from .validation import (check, INJECTED_HEADER, _assignments, _UNPARSED, injected, _defaults, _CHAPTER_OF,
    chapter_of, profile_values, _same, chapter_module, dry_plan, validate, describe)  # noqa: F401
