"""002 failure-rates: the phase diagram accepts the reader's own data (a .npz or .csv file), checked before a kernel
starts, next to the source's three-point data."""
import numpy as np
import pytest

from shallowflow.experiments.early_alignment import failure_rates as fr
from shallowflow.params import ParameterError, validate


def _defaults(**kw):
    P = dict(profile="custom", widths=[10], scales=[1e-2], seeds=[0, 1], large_width=5000, large_seeds=[0], lr=1e-2,
             time=1.0, step_check_width=10, step_check_factor=2, step_check_seeds=[0], contrast_widths=[10],
             contrast_scales=[1e-2], contrast_seeds=[0], contrast_time=1.0, leak=0.1, leaky_small_scales=[1e-3],
             level=0.95, data="ea-three-point", sections=["grid", "contrasts"], resume=False)
    P.update(kw)
    return validate(P, fr.SCHEMA, fr.RULES)


def test_named_data_is_the_three_point_data():
    P = _defaults()
    d = fr.load_data(P.data)
    assert d.n == 3 and d.d == 2 and fr.data_dim(P.data) == 2


def test_a_csv_file_is_loaded_with_its_shape(tmp_path):
    f = tmp_path / "four.csv"
    np.savetxt(f, np.c_[[-1.0, -0.5, 0.2, 0.9], np.ones(4), [1.0, 0.2, 0.5, 0.3]], delimiter=",")
    P = _defaults(data=str(f))
    d = fr.load_data(P.data)
    assert (d.n, d.d) == (4, 2) and fr.data_dim(P.data) == 2
    g = fr.run_grid(d, [5], [1e-2], lambda m: [0], lr=1e-2, T=0.05)
    assert set(g.outcome) == {(5, 1e-2)}


def test_a_bad_file_is_refused_naming_the_parameter(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("1.0,2.0\nnan,3.0\n")
    with pytest.raises(ParameterError, match="data"):
        _defaults(data=str(f))
    with pytest.raises(ParameterError, match="data"):
        _defaults(data=str(tmp_path / "missing.npz"))
