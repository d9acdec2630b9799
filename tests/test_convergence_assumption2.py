"""001 convergence: a combination of n and d where every seed's data set violates Assumption 2 is refused before a
kernel starts, naming the parameters (the paper profile once set n = 100 beside the book's d = 1e6 and failed in its
fourth cell after the kernel had started); the paper profile's d (about 600 n^2, as the specification chooses it)
is accepted."""
import pytest

from shallowflow import executor


def test_too_small_a_d_for_the_largest_n_is_refused_in_one_line():
    with pytest.raises(Exception) as e:
        executor.prepare("weakly-interacting/convergence", "book", {"ns": [10, 100], "log_ns": [], "d": 1e6})
    msg = str(e.value)
    assert "Assumption 2" in msg and "'d'" in msg and "\n" not in msg.strip()


def test_the_paper_profile_is_accepted():
    executor.prepare("weakly-interacting/convergence", "paper")
