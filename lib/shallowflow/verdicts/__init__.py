"""The verdict machinery: what a chapter checks, why a check fails, and what the book concludes.

- :mod:`~shallowflow.verdicts.criteria`: pass criteria (``below``, ``within``, ...) and the formatting
  of measured values;
- :mod:`~shallowflow.verdicts.checks`: a chapter's book-keeper :class:`Claims` and its :class:`Check`
  records, compared with the registry when the chapter finishes;
- :mod:`~shallowflow.verdicts.registry`: the committed registry ``verdicts/<source>.yml`` and the claim
  records; :mod:`~shallowflow.verdicts.law`: the registry's law (:func:`validate_registry`);
- :mod:`~shallowflow.verdicts.controls`: the negative controls a deciding check names, and how many have one;
- :mod:`~shallowflow.verdicts.causes`: the causes of failures, the evidence that proves each, the why
  generated from the records, and a target's verdict;
- :mod:`~shallowflow.verdicts.scorecard`: every target's verdict in one build, as a page, JSON and errata;
- :mod:`~shallowflow.verdicts.report`: a reproduction report per source (claims, deviations, cost, environment);
- :mod:`~shallowflow.verdicts.paper`: what the recorded paper-scale runs measured for the checks undecided here.

Chapters import it as ``from shallowflow import verdicts as C`` (``shallowflow.verdicts`` is the same
module, kept for re-runs of older notebooks).
"""
from .causes import (CAUSES, DEVIATION_CAUSES, EVIDENCE_CAUSES, KINDS, SOURCE_CAUSES, TARGET_VERDICTS, classify,
                     evidence_status, explain, render_why, same_measurement, target_verdict)
from .checks import NO_TRAINING, Check, Claims, _fault_hold, _short
from .criteria import Criterion, _fmt1, _values, above, below, close_to, fmt, is_true, rejected_by, within
from .law import validate_registry
from .registry import (COMPARED_PROFILES, FAIL, NOT_RUN, PASS, UNDECIDED, VerdictMismatch, chapter_of, claims_dir,
                       load_records, load_registry, placeholder_ids, registered, registry_dir, repo_root,
                       typed_numbers)
from .scorecard import (SCORECARD_SCHEMA, VERDICT_COLOURS, _chapter_link, _function_link, badge, check_anchor, checks_html, errata, inline_html, quotes_html,
                        registered_verdicts, scorecard, scorecard_html, scorecard_json, scorecard_problems, verdict_counts,
                        verdict_table_html, write_scorecard_json)
