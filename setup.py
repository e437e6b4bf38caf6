"""Package discovery for the one import name ``chipsched`` over the repository's folders.

The core is ``chipsched/``; the top-level folders ``formulations/``, ``heuristics/``,
``solvers/`` and ``instances/`` are its sub-packages ``chipsched.formulations`` … (see
docs/architecture.md). Every package below them is found here, so a new decision's
modules or sub-packages need no edit of this file or of ``pyproject.toml`` (which holds
everything else).
"""

from setuptools import find_packages, setup

FOLDERS = ("formulations", "heuristics", "solvers", "instances")

packages = ["chipsched", *(f"chipsched.{p}" for p in find_packages("chipsched"))]
package_dir = {"chipsched": "chipsched"}
for folder in FOLDERS:
    packages += [f"chipsched.{folder}", *(f"chipsched.{folder}.{p}" for p in find_packages(folder))]
    package_dir[f"chipsched.{folder}"] = folder

setup(packages=packages, package_dir=package_dir)
