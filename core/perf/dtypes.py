"""Data types as the profilers name them, in one vocabulary.

Kineto's `Input type` names C++ types ("float", "c10::BFloat16", "long int"); Ascend's tables
name GE types ("FLOAT", "DT_BF16", "FLOAT16"). Both are mapped to one short canonical name
("fp32", "bf16", "fp16" ...), which picks a peak in the hardware table and a size in bytes.
"""

from __future__ import annotations

# canonical name -> bytes per element (int4 is half a byte)
SIZES: dict[str, float] = {
    "fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int64": 8, "int32": 4,
    "int16": 2, "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1,
    "int4": 0.5, "complex64": 8, "complex128": 16,
}

_ALIASES: dict[str, str] = {
    # Kineto (C++ type names as c10 prints them)
    "float": "fp32", "double": "fp64", "c10::half": "fp16", "c10::bfloat16": "bf16",
    "long int": "int64", "long": "int64", "int": "int32", "short int": "int16", "short": "int16",
    "signed char": "int8", "unsigned char": "uint8", "bool": "bool",
    "c10::float8_e4m3fn": "fp8", "c10::float8_e5m2": "fp8", "c10::float8_e4m3fnuz": "fp8",
    "c10::float8_e5m2fnuz": "fp8", "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
    # Ascend (GE data types, with or without their DT_ prefix)
    "float32": "fp32", "float16": "fp16", "bf16": "bf16", "bfloat16": "bf16", "float64": "fp64",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "int4": "int4",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "hifloat8": "fp8", "complex64": "complex64",
    "complex128": "complex128",
}


def canonical_dtype(text: str) -> str | None:
    """The canonical name of a profiler's dtype text, or None for what is not a tensor's
    element type ("Scalar", "TensorList", "", "N/A", an unknown name)."""
    key = text.strip().lower()
    if key.startswith("dt_"):
        key = key[3:]
    if key in SIZES:
        return key
    return _ALIASES.get(key)


def dtype_bytes(text: str) -> float | None:
    """Bytes per element of a dtype (profiler text or canonical name), None when unknown."""
    name = canonical_dtype(text)
    return None if name is None else SIZES[name]
