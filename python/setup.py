"""Builds the gnnc wheel around an already built libgnnc_c.so (the CMake
target gnnc_c), which is copied into the package: from $GNNC_LIBRARY (the
file or its folder), else ../build/lib/libgnnc_c.so next to this folder."""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
NAME = "libgnnc_c.so"


def find_library() -> Path:
    tried = []
    env = os.environ.get("GNNC_LIBRARY")
    if env:
        p = Path(env)
        p = p / NAME if p.is_dir() else p
        tried.append(f"$GNNC_LIBRARY: {p}")
        if p.is_file():
            return p
    p = HERE.parent / "build" / "lib" / NAME
    tried.append(str(p))
    if p.is_file():
        return p
    raise SystemExit(
        "gnnc: no built libgnnc_c.so found; looked at:\n  " + "\n  ".join(tried)
        + "\nBuild it first (cmake --build build --target gnnc_c) or set "
        "GNNC_LIBRARY to its path.")


class BuildWithLibrary(build_py):
    def run(self):
        lib = find_library()
        super().run()
        dest = Path(self.build_lib) / "gnnc" / NAME
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest)
        print(f"gnnc: packaged {lib}")


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: platform specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
