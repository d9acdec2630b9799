"""The book's written-out plotting theme is seaborn's whitegrid theme (plots.THEME, plots.PALETTE)."""
import matplotlib as mpl
import matplotlib.pyplot as plt
import seaborn as sns

from shallowflow.site import plots


def test_theme_is_seaborns_whitegrid_notebook_theme():
    want = dict(sns.axes_style("whitegrid")) | dict(sns.plotting_context("notebook", font_scale=0.95))
    got = dict(plots.THEME)
    assert set(got) == set(want)
    assert got.pop("image.cmap") == "viridis" and want.pop("image.cmap") == "rocket"  # the one replaced key
    for k, v in want.items():
        assert got[k] == v or abs(got[k] - v) < 1e-12, k
    assert list(plots.PALETTE) == sns.color_palette("deep").as_hex()


def test_setup_applies_the_theme_and_colour_codes():
    with mpl.rc_context():
        plots.setup()
        assert plt.rcParams["axes.edgecolor"] == ".8" and plt.rcParams["axes.grid"]
        assert plt.rcParams["axes.prop_cycle"].by_key()["color"][0] == plots.PALETTE[0]
        sns.set_color_codes("deep")
        seaborn_b = mpl.colors.colorConverter.colors["b"]
        plots.setup()
        assert mpl.colors.colorConverter.colors["b"] == seaborn_b
