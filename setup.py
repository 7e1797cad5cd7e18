"""Package discovery: this folder is the package `proftui`, which pyproject's own discovery
cannot say. Every sub-package under core/, tui/ and themes/ is found, so none can be missing
from the wheel (tests/packaging/test_wheel.py builds and installs it).

The optional native event reader (core/importers/chrome/_native.c) is compiled where a C
compiler and the Python headers exist; elsewhere the build says so in one warning and the
package installs without it (the Python path reads every batch). PROFTUI_BUILD_NATIVE=0 skips
it. `pip install -e .` builds it in place, beside the source, where the import finds it.
"""

import os
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CCompilerError, ExecError, FileError, PlatformError

PARTS = ("core", "core.*", "tui", "tui.*", "themes", "themes.*")
# Its sources (and any header, listed in `depends`) go into the sdist by themselves.
NATIVE = Extension("proftui.core.importers.chrome._native",
                   sources=["core/importers/chrome/_native.c"])
# Portable flags: the wheel runs on machines other than the one that built it (no -march).
UNIX_FLAGS = ["-O2", "-std=c11"]
SKIP_VARIABLE = "PROFTUI_BUILD_NATIVE"
# What a machine without a working compiler raises: none found (PlatformError), a compile or
# link that fails (CCompilerError), a compiler that cannot be run (ExecError, OSError), the
# source absent (FileError).
NOT_BUILDABLE = (CCompilerError, ExecError, FileError, PlatformError, OSError)


class BuildPy(build_py):
    """The package's modules, but this file."""

    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir)
                if (m[0], m[1]) != ("proftui", "setup")]


def remove(path):
    if os.path.exists(path):
        os.remove(path)


def warn(message):
    sys.stderr.write(f"\nWARNING: {message}\n\n")


class OptionalBuildExt(build_ext):
    """build_ext that never fails the installation: a compiler or linker error (no compiler,
    no Python.h, a compiler that rejects the code) becomes one warning, and the package is
    installed without the native reader. What an earlier build left is removed then, so that
    a module older than its source is never installed or imported in its place."""

    def run(self):
        self.failed = set()
        if os.environ.get(SKIP_VARIABLE) == "0":
            warn(f"{SKIP_VARIABLE}=0: the native event reader is not built; proftui reads "
                 "traces with its Python reader.")
            self.failed = {ext.name for ext in self.extensions}
            self.forget_inplace()
            return
        try:
            super().run()
        except NOT_BUILDABLE as exc:  # no compiler at all is found here, before any build
            self.failed = {ext.name for ext in self.extensions}
            self.forget_inplace()
            self.not_built(exc)

    def build_extension(self, ext):
        if self.compiler.compiler_type == "unix":
            ext.extra_compile_args = [*ext.extra_compile_args, *UNIX_FLAGS]
        try:
            super().build_extension(ext)
        except NOT_BUILDABLE as exc:
            self.failed.add(ext.name)
            remove(self.get_ext_fullpath(ext.name))  # under build/: not copied in place
            self.not_built(exc)

    def copy_extensions_to_source(self):
        """The in-place copy (`--inplace`, editable installs) of what was built only."""
        every = self.extensions
        self.extensions = [ext for ext in every if ext.name not in self.failed]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every
        self.forget_inplace()

    def forget_inplace(self):
        if self.inplace or getattr(self, "editable_mode", False):
            inplace, self.inplace = self.inplace, True
            for name in self.failed:
                remove(self.get_ext_fullpath(name))
            self.inplace = inplace

    def not_built(self, exc):
        reason = " ".join(str(exc).split()) or type(exc).__name__
        warn(f"the native event reader was not built ({reason}). proftui is installed "
             "without it and reads traces with its Python reader, which gives the same "
             "index, more slowly. `proftui --version` says which reader runs.")


if __name__ == "__main__":  # `python setup.py ...` and pip's build backend (not an import)
    setup(packages=["proftui", *(f"proftui.{p}" for p in find_packages(".", include=PARTS))],
          package_dir={"proftui": "."}, ext_modules=[NATIVE],
          package_data={"proftui.core.perf": ["peaks.csv"]},  # the hardware peaks table
          cmdclass={"build_py": BuildPy, "build_ext": OptionalBuildExt})
