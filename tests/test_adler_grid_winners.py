"""Issue 41: the adler page's table of the grid rate that won each cell, and whether it sits at an edge of the grid
(computed from the chapter's runs: here from runs made up for the purpose, so each case is known)."""
from shallowflow.experiments.balboni_thesis import adler as A
from shallowflow.experiments.balboni_thesis import adler_grid as G

GRID = [0.01, 0.1, 0.3]


def _run(ds, act, seed, lr, acc, diverged=False):
    r = A.Run(ds, "cnn", act, seed, "sgd", lr, train_loss=[1.0], test_acc=[acc])
    r.diverged_at = 3 if diverged else -1
    return r


def _comp(runs):
    return A.Comparison(runs=runs, splits={}, threads={}, seconds=0.0)


def test_the_winner_of_each_seed_and_the_edges():
    runs = [_run("d", "relu", 0, 0.01, 0.5), _run("d", "relu", 0, 0.1, 0.6), _run("d", "relu", 0, 0.3, 0.9),
            _run("d", "relu", 1, 0.01, 0.5), _run("d", "relu", 1, 0.1, 0.9), _run("d", "relu", 1, 0.3, 0.6),
            _run("d", "tanh", 0, 0.01, 0.9), _run("d", "tanh", 0, 0.1, 0.2),
            _run("d", "sigmoid", 0, 0.1, 0.9), _run("d", "sigmoid", 0, 0.3, 0.99, diverged=True)]
    rows = {r["act"]: r for r in G.grid_winners(_comp(runs), GRID)}
    assert rows["relu"]["rates"] == {0: 0.3, 1: 0.1} and rows["relu"]["edges"] == {0: "highest"}
    assert rows["tanh"]["rates"] == {0: 0.01} and rows["tanh"]["edges"] == {0: "lowest"}
    assert rows["sigmoid"]["rates"] == {0: 0.1} and rows["sigmoid"]["edges"] == {}  # a diverged run never wins
    html = G.winners_html(_comp(runs), GRID)
    assert "2 of 3 cells have a winner at an edge" in html and "did not bracket" in html and "inside the grid" in html


def test_a_cell_whose_grid_all_diverged_says_so():
    rows = G.grid_winners(_comp([_run("d", "relu", 0, 0.3, 0.1, diverged=True)]), GRID)
    assert rows[0]["rates"] == {0: None} and not rows[0]["edges"]
    assert "all diverged" in G.winners_html(_comp([_run("d", "relu", 0, 0.3, 0.1, diverged=True)]), GRID)
