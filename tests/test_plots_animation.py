"""plots.animation_player: a self-contained HTML player whose frames are those matplotlib's to_jshtml writes, each
drawn once (to_jshtml rendered every frame twice), with no link to a CDN (the site renders offline)."""
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import animation  # noqa: E402

from shallowflow.site import plots  # noqa: E402


def _draw(fig, i):
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, i])
    ax.set_title(f"frame {i}")


def _frames(html: str) -> list[str]:
    return re.findall(r'frames\[\d+\] = "(data:image/png;base64,[^"]+)"', html)


def test_same_frames_as_matplotlibs_player_each_drawn_once():
    calls = []

    def counted(fig, i):
        calls.append(i)
        _draw(fig, i)

    html = plots.animation_player(list(range(4)), counted, figsize=(3, 2), dpi=40)
    assert calls == [0, 1, 2, 3]
    fig = plt.figure(figsize=(3, 2), dpi=40)

    def update(i):
        fig.clear()
        _draw(fig, i)
        return []

    reference = animation.FuncAnimation(fig, update, frames=4, blit=False).to_jshtml(fps=10, default_mode="once")
    plt.close(fig)
    assert len(_frames(html)) == 4 and _frames(html) == _frames(reference)
    assert not re.search(r"<link[^>]*href=[\"']https?://", html)
