"""Package discovery: this folder is the package `proftui`, which pyproject's own discovery
cannot say. Every sub-package under core/, tui/ and themes/ is found, so none can be missing
from the wheel (tests/packaging/test_wheel.py builds and installs it)."""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PARTS = ("core", "core.*", "tui", "tui.*", "themes", "themes.*")


class BuildPy(build_py):
    """The package's modules, but this file."""

    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir)
                if (m[0], m[1]) != ("proftui", "setup")]


setup(packages=["proftui", *(f"proftui.{p}" for p in find_packages(".", include=PARTS))],
      package_dir={"proftui": "."}, cmdclass={"build_py": BuildPy})
