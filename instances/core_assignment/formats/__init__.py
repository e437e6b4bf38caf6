"""File formats of the core_assignment decision, one module each: generic JSON
(:mod:`.jsonfile`), METIS graph files (:mod:`.metis`), QAPLIB grid instances
(:mod:`.qaplib`), and the seed-004 varint + deflate zip with a streaming reader and
writer (:mod:`.seedzip`).

Every reader raises a one-line :class:`~chipsched.errors.InputError` naming the file (and
line or member) on malformed input; every writer writes through
:func:`chipsched.files.atomic_write` or a temporary file renamed into place,
so nothing half-written is ever left behind.
"""

from .jsonfile import JSON_SCHEMA, parse_json, read_json, write_json
from .metis import read_metis, write_metis
from .qaplib import read_qaplib, read_qaplib_solution
from .seedzip import (
    FORMAT_VERSION,
    SeedZipReader,
    SeedZipWriter,
    decode_varints,
    encode_varints,
    metis_to_zip,
    read_zip,
    write_zip,
    zip_to_metis,
)

__all__ = [
    "FORMAT_VERSION", "JSON_SCHEMA", "SeedZipReader", "SeedZipWriter", "decode_varints",
    "encode_varints", "metis_to_zip", "parse_json", "read_json", "read_metis",
    "read_qaplib", "read_qaplib_solution", "read_zip", "write_json", "write_metis",
    "write_zip", "zip_to_metis",
]
