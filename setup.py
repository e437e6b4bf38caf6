"""Package discovery for the one import name ``chipsched`` over the repository's folders.

The core is ``chipsched/``; the top-level folders ``formulations/``, ``heuristics/``,
``solvers/`` and ``instances/`` are its sub-packages ``chipsched.formulations`` … (see
docs/architecture.md) through the symbolic links ``chipsched/formulations`` → ``../
formulations`` etc. With the links the source tree is laid out as it installs: Python
run from the repository root, editors and type checkers resolve ``chipsched.solvers``
like any package, a wheel holds plain files, and an editable install is a plain path
entry (no import hook, no setuptools warning). Every package below the five folders is
found here, so a new decision's modules need no edit of this file or of
``pyproject.toml`` (which holds everything else).
"""

from setuptools import find_namespace_packages, find_packages, setup

# chipsched-lib's folders hold only JSON files (pyproject.toml's package-data); named as
# (namespace) packages so that setuptools does not warn, for each, that a folder of data
# looks like a package it was not told about
LIBRARY = find_namespace_packages(include=["chipsched.instances.library",
                                           "chipsched.instances.library.*"])

setup(packages=find_packages(include=["chipsched", "chipsched.*"]) + LIBRARY,
      package_dir={"": "."})
