"""The package's build (pyproject.toml holds the metadata): after the package is copied,
compile the C backend's fixed units into sympile/_prebuilt (sympile.compile.prebuild), so
that the first function on a new install compiles only what its graph needs. Where that
cannot run (no C compiler here, or it fails), the build says why and goes on: the units then
compile into the cache on first use, as they would without the prebuilt tier."""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithPrebuiltUnits(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install runs from the checkout, which has no tier
        target = os.path.join(self.build_lib, "sympile", "_prebuilt")
        # The package first; then what the environment had, which is how pip's isolated
        # build environment reaches its own numpy and scipy (a sitecustomize on PYTHONPATH).
        path = os.pathsep.join(filter(None, [os.path.abspath(self.build_lib),
                                             os.environ.get("PYTHONPATH")]))
        environment = {**os.environ, "PYTHONPATH": path}
        # Whatever the builder's SYMPILE_FLAGS say, the tier is built under the defaults,
        # which are what its keys must match.
        environment.pop("SYMPILE_FLAGS", None)
        result = subprocess.run([sys.executable, "-m", "sympile.compile.prebuild", target],
                                env=environment, capture_output=True, text=True)
        if result.returncode:
            print(f"sympile: the fixed C units were not prebuilt (they will compile on first "
                  f"use): {result.stderr.strip()[-2000:]}", file=sys.stderr)
        else:
            print(result.stdout.strip())


setup(cmdclass={"build_py": BuildWithPrebuiltUnits})
