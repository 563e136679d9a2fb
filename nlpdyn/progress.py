"""Progress bars: tqdm's, imported only when a bar may show (``tqdm.auto`` takes 0.02 s to
import, asyncio with it).

``progress`` is the public option of ``simulate``, ``sweep`` and the views: True shows a
bar, False hides it, None shows it only where tqdm would (a terminal, a Jupyter kernel).
"""
from __future__ import annotations

import sys


class HiddenBar:
    """A bar that shows nothing: what tqdm's bar does when disabled, without tqdm.

    Examples
    --------
    >>> with HiddenBar() as bar:
    ...     bar.update(0.5)
    >>> bar.n
    0.5
    """

    def __init__(self):
        self.n = 0

    def update(self, n=1):
        self.n += n

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_bar(progress: bool | None, **options):
    """A tqdm bar (``tqdm.auto``), or a :class:`HiddenBar` where tqdm's would not show.

    Parameters
    ----------
    progress : bool or None
        True: shown; False: hidden; None: shown in a Jupyter kernel or when ``sys.stderr`` is
        a terminal, as ``tqdm(disable=None)`` does.
    **options
        tqdm's other arguments (``total``, ``unit``, ``desc``, ``bar_format``).

    Returns
    -------
    tqdm.tqdm or HiddenBar
        ``update``, ``set_postfix``, ``close``, and a context manager.

    Examples
    --------
    >>> bar = progress_bar(False, total=1.0, unit="s")
    >>> type(bar).__name__
    'HiddenBar'
    """
    if progress is not None and not progress:
        return HiddenBar()
    if progress is None and "IPython" not in sys.modules:
        # tqdm.auto is the console bar here, which disable=None hides off a terminal
        isatty = getattr(sys.stderr, "isatty", None)
        if isatty is not None and not isatty():
            return HiddenBar()
    from tqdm.auto import tqdm
    return tqdm(disable=None if progress is None else not progress, **options)
