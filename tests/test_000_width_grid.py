"""000 width-grid: the plateau count of a run must not depend on the epoch budget (issue 26; the paper profile's
C.9/two-plateaus failure).  Until the record interval became a function of the step size alone, it was
``epochs // 30000``: 1 epoch at the book's 1e4 epochs for alpha 1e-2, 3 at the paper's 1e5, and the chapter
counted plateaus on the records repeated into a piecewise-constant curve.  The first test shows that this
procedure counts a different number of plateaus on the very same run at the two strides (the cause); the second
that the chapter's run now gives the same T, max L and plateau table under both budgets.  Seconds."""
from types import SimpleNamespace

import numpy as np

from shallowflow.engine import data as datasets
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import theory as T
from shallowflow.experiments.brisbois_thesis import width_grid as G
from shallowflow.engine.models import Network
from shallowflow.engine.train import gradient_descent


def _old_count(traj) -> int:
    """The chapter's former reading: the records repeated over the epochs between them, then the detector."""
    L = traj.loss.numpy()[0]
    rec = int(traj.loss_steps[1] - traj.loss_steps[0])
    end = int(Cm.first_epoch_below(traj, 0.01)[0])
    return T.plateau_summary(np.repeat(L, rec)[: end + 1], end)["count"]


def test_the_former_count_depended_on_the_record_stride():
    """ReLU, m = 60, lambda = 1e-4, alpha = 1e-2 (a run of the grid): the same trajectory recorded every epoch
    (book: 1e4 epochs) and every 3 epochs (paper: 1e5 epochs) counted 2 and 3 plateaus."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seed = Cm.assumption5_seeds(data, 60, 1)[0]
    counts = {}
    for rec in (1, 3):
        p = Cm.initial("balanced", [seed], 60, data.d, [1e-4])
        tr = gradient_descent(p, data, Network("relu"), lr=1e-2, steps=3000, record_every=rec, stop_below=0.01,
                              on_nonfinite="stop", loss="mean")
        counts[rec] = _old_count(tr)
    assert counts == {1: 2, 3: 3}


def test_the_chapter_count_does_not_depend_on_the_budget():
    rows = {}
    for budget in (10, 1000):  # 1e3 and 1e5 epochs at alpha 1e-2
        P = SimpleNamespace(widths=[60], lrs=[1e-2], scales=[1e-4], budget=budget, max_epochs=300_000, fig33_scale=1e-4)
        assert G.record_every(P, 1e-2) == 1
        rows[budget] = [r for r in G.run_grid(P) if r["act"] == "relu"]
    keys = ("T", "count", "initial", "intermediate", "Lmax", "L0")
    assert [{k: r[k] for k in keys} for r in rows[10]] == [{k: r[k] for k in keys} for r in rows[1000]]
    assert rows[10][0]["T"] > 0 and rows[10][0]["count"] == 2


def test_record_interval_is_a_function_of_the_step_size():
    book = SimpleNamespace(budget=100, max_epochs=300_000)
    paper = SimpleNamespace(budget=1000, max_epochs=1_000_000)
    for lr in (1e-4, 1e-3, 1e-2, 1e-1):
        assert G.record_every(book, lr) == G.record_every(paper, lr) == max(1, round(G.RECORD_TIME / lr))


def test_detector_on_records_equals_the_detector_on_every_epoch_when_block_edges_are_recorded():
    """On a curve recorded every 5 epochs, the detector with every = 5 reads the same values as on the full curve
    whenever end // 100 is a multiple of 5."""
    t = np.arange(0, 20001)
    curve = np.where(t < 8000, 1.0, np.where(t < 12000, 0.5, 0.5 * np.exp(-(t - 12000) / 500))) * (1 - 1e-7 * t)
    assert T.plateaus(curve[::5], 20000, every=5) == T.plateaus(curve, 20000)
    assert len(T.plateaus(curve, 20000)) == 2
