"""Test tiers.

``python -m pytest -q`` is the fast tier: tests marked ``slow`` or ``notebook`` are deselected
(the doctests of ``nlpdyn/`` carry no marker and always run). ``python -m pytest -q --full``
(or ``NLPDYN_FULL_TESTS=1``) runs everything, as CI does. An explicit ``-m`` expression
(``-m notebook``, ``-m "slow or notebook"``) replaces the tier's selection.
"""
import os

import pytest

SLOW_MARKERS = ("slow", "notebook")


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="run the full tier: the tests marked slow or notebook too (what CI "
                          "runs; also NLPDYN_FULL_TESTS=1)")


def _full(config):
    return (config.getoption("--full")
            or os.environ.get("NLPDYN_FULL_TESTS", "").strip().lower() in ("1", "true", "yes"))


def pytest_collection_modifyitems(config, items):
    if _full(config) or config.option.markexpr:
        return
    keep, skipped = [], []
    for item in items:
        (skipped if any(item.get_closest_marker(m) for m in SLOW_MARKERS) else keep).append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = keep


def pytest_report_header(config):
    if _full(config):
        return "nlpdyn tests: full tier"
    if config.option.markexpr:
        return f"nlpdyn tests: -m {config.option.markexpr!r}"
    return "nlpdyn tests: fast tier (slow and notebook tests deselected; --full runs them)"
