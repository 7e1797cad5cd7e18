"""Package discovery: this folder is the package `proftui`; every sub-package under core/, tui/
and themes/ is found, so none can be missing from the wheel (tests/test_wheel.py checks)."""

from setuptools import find_packages, setup

PARTS = ("core", "core.*", "tui", "tui.*", "themes", "themes.*")
setup(packages=["proftui", *(f"proftui.{p}" for p in find_packages(".", include=PARTS))],
      package_dir={"proftui": "."})
