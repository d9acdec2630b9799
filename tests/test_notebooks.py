"""The smoke tier, first half: every chapter runs under papermill with its smoke parameters.

A chapter passes when it executes without error; its own last cells compare its verdicts with the
registry (a mismatch raises inside the notebook).  The executed notebooks land in
artifacts/runs/smoke/, where nbval then re-executes them (see the Makefile's test-smoke target).
The scorecard runs last, since it reads the other chapters' claim records.
"""
import pytest

from shallowflow import cli
from shallowflow.claims import load_records

CHAPTERS = [c for c in cli.chapters() if c != "scorecard"] + ["scorecard"]


@pytest.mark.notebooks
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_smoke(chapter):
    out = cli.execute(chapter, profile="smoke")
    assert out.exists()
    if chapter != "scorecard":
        recs = [r for r in load_records("smoke") if r["chapter"] == f"book/{chapter}"]
        assert recs and recs[0]["checks"], f"{chapter} recorded no checks"
