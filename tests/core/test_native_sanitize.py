"""bench/native_sanitize.py, end to end on tiny modules of the native reader's shape: a clean
one passes, one that reads a byte past the range it is given is caught by AddressSanitizer,
one that accepts a range outside its buffer fails the run.
(The real module's run, 10,000 cases, is a documented command: docs/performance.md.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "bench" / "native_sanitize.py"
MODULE = """
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *read_batch(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &end)) return NULL;
    if (CHECKED && (start < 0 || end < start || end > view.len)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "range out of the buffer");
        return NULL;
    }
    volatile char seen = 0;
    for (Py_ssize_t i = start; CHECKED && i < end + OVERREAD; i++)
        seen ^= ((const char *)view.buf)[i];
    PyBuffer_Release(&view);
    if (!CHECKED) return PyTuple_New(0);  /* accepts whatever range it is given */
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {{"read_batch", read_batch, METH_VARARGS, NULL}, {NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods};
PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
"""


def _libasan() -> bool:
    if shutil.which("gcc") is None:
        return False
    found = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                           text=True).stdout.strip()
    return os.path.isabs(found) and os.path.exists(found)


pytestmark = pytest.mark.skipif(not _libasan(), reason="no gcc with AddressSanitizer here")


def _run(tmp_path: Path, overread: int = 0, checked: int = 1) -> subprocess.CompletedProcess:
    source = tmp_path / "_native.c"
    source.write_text(f"#define OVERREAD {overread}\n#define CHECKED {checked}\n" + MODULE)
    return subprocess.run([sys.executable, HARNESS, "--source", source, "--cases", "3",
                           "--slices", "1", "--out", tmp_path / "crashes"],
                          capture_output=True, text=True, timeout=120)


def test_a_module_that_stays_in_its_range_passes(tmp_path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cases 3; calls ") and "crashes 0;" in done.stdout


def test_a_read_past_the_range_is_caught(tmp_path) -> None:
    done = _run(tmp_path, overread=1)
    assert done.returncode == 1
    assert "crashes 3;" in done.stdout and "heap-buffer-overflow" in done.stderr
    assert sorted(p.name for p in (tmp_path / "crashes").iterdir()) == \
        ["case-0.json", "case-1.json", "case-2.json"]


def test_a_range_outside_the_buffer_must_not_be_accepted(tmp_path) -> None:
    done = _run(tmp_path, checked=0)
    assert done.returncode == 1 and "crashes 0;" in done.stdout
    assert "out-of-range calls accepted 3" in done.stdout
