def test_trim_heap_is_throttled_and_changes_nothing_else():
    import ctypes.util
    import torch
    from shallowflow import config

    config._last_trim = 0.0
    x = torch.arange(10, dtype=torch.float64)
    first = config.trim_heap(every_s=3600.0)
    assert first == bool(ctypes.util.find_library("c"))  # glibc here: it trims; elsewhere a no-op
    assert config.trim_heap(every_s=3600.0) is False  # within the hour: throttled
    assert torch.equal(x, torch.arange(10, dtype=torch.float64))
