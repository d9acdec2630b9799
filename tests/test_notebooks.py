"""The smoke tier, first half: every chapter runs under papermill with its smoke parameters.

A chapter passes when it executes without error; its own last cells compare its verdicts with the
registry (a mismatch raises inside the notebook).  The executed notebooks land in
artifacts/runs/smoke/, where nbval then re-executes them (see the Makefile's test-smoke target).
The chapters are independent of each other (the Makefile runs them in parallel); the scorecard reads
their claim records, so it has its own marker and runs after them.
"""
import pytest

from shallowflow import cli
from shallowflow.claims import load_records

CHAPTERS = [c for c in cli.chapters() if c != "scorecard"]


@pytest.mark.notebooks
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_smoke(chapter):
    out = cli.execute(chapter, profile="smoke")
    assert out.exists()
    recs = [r for r in load_records("smoke") if r["chapter"] == f"book/{chapter}"]
    assert recs and recs[0]["checks"], f"{chapter} recorded no checks"


@pytest.mark.scorecard
def test_scorecard_smoke():
    """Every chapter's record is there (run the notebooks marker first), and the scorecard executes."""
    recorded = {r["chapter"] for r in load_records("smoke")}
    missing = [c for c in CHAPTERS if f"book/{c}" not in recorded]
    assert not missing, f"no smoke records for {missing}: run `pytest -m notebooks` first"
    assert cli.execute("scorecard", profile="smoke").exists()
