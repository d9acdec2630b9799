"""000, gradients-hessians: the data of Tables D.1/D.2 is a parameter (the thesis's Dataset 1.1.0 by name, or a
.npz/.csv file); a file is checked before a kernel starts, and the closed forms hold on it as on the thesis's data."""
import numpy as np
import pytest

from shallowflow.params import chapters
from shallowflow.params import ParameterError, validate
from shallowflow.experiments.brisbois_thesis import gradients_hessians as G

CH = "book/brisbois-thesis/gradients-hessians"


def _values(**kw):
    return {**chapters.defaults(CH), "profile": "custom", "draws": 20, "hessian_draws": 4, "width": 3, **kw}


def test_named_data_is_the_thesis_dataset():
    P = validate(_values(), G.SCHEMA, G.RULES)
    d = G.table_data(P)
    assert P.data == "1.1.0" and d.X.tolist() == [[-0.5, 1.0], [2.0, 1.0]] and d.y.tolist() == [-1.0, 1.0]


def test_a_csv_file_runs_and_the_closed_forms_hold(tmp_path):
    f = tmp_path / "three.csv"
    f.write_text("x1,x2,x3,y\n-0.5,1,0.2,-1\n2,1,-0.3,1\n0.3,-1,1,0.5\n")
    P = validate(_values(data=str(f), scales=[1e-2, 1.0]), G.SCHEMA, G.RULES)
    assert G.table_data(P).X.shape == (3, 3)
    gt = G.gradient_table(P)
    assert max(v["autograd"] for v in gt.values()) < 1e-12  # G1's criterion on these data
    ht = G.hessian_table(P)
    assert max(v["autograd"] for v in ht.values()) < 1e-10  # H1's


@pytest.mark.parametrize("text,why", [("x,y\n1,nan\n", "finite"), ("x,y,z\n" + "1,2,3\n" * 3, "")])
def test_bad_files_are_refused_naming_the_parameter(tmp_path, text, why):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    # the second file has two input columns and one label: valid; the first has a NaN label
    if why:
        with pytest.raises(ParameterError, match="'data'"):
            validate(_values(data=str(f)), G.SCHEMA, G.RULES)
    else:
        assert validate(_values(data=str(f)), G.SCHEMA, G.RULES).data == str(f.resolve())
    with pytest.raises(ParameterError, match="'data'"):
        validate(_values(data=str(tmp_path / "missing.npz")), G.SCHEMA, G.RULES)
