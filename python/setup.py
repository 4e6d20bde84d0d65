"""pip install ./python: the hostccl Python package (torch.distributed backend "hostccl").

Builds hostccl's libraries and the torch extension with the project's CMake (against
Debian's python3-torch / libtorch-dev and pybind11-dev: scripts/setup-deps.sh installs
them), then installs the package with libhccl, libascendcl and libhostccl_training
beside its extension, which finds them there. With Debian's Python:

    /usr/bin/python3 -m venv --system-site-packages venv   # torch comes from Debian
    venv/bin/pip install --no-build-isolation ./python

(or `/usr/bin/python3 -m pip install --break-system-packages --no-build-isolation ./python` for the
system; --no-build-isolation: pip builds with Debian's setuptools, offline).
HOSTCCL_BUILD_DIR=<build tree> takes the libraries and the extension from a tree the
README's build made, instead of building them again.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
LIBRARIES = ("libhccl.so", "libascendcl.so", "libhostccl_training.so")


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(hostccl VERSION ([0-9.]+)", f.read()).group(1)


def run(*cmd):
    print("hostccl setup:", " ".join(cmd), flush=True)
    subprocess.check_call(cmd)


class CMakeBuild(build_ext):
    """Builds (or takes) the CMake tree, installs it to a staging prefix and copies the
    extension and the shared libraries it needs into the package."""

    def build_extension(self, ext):
        tree = os.environ.get("HOSTCCL_BUILD_DIR")
        if tree:
            tree = os.path.abspath(tree)
        else:
            tree = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            run("cmake", "-S", SOURCE, "-B", tree, "-DCMAKE_BUILD_TYPE=Release", "-DHOSTCCL_BUILD_TESTS=OFF",
                "-DHOSTCCL_BUILD_EXAMPLES=OFF", "-DPython3_EXECUTABLE=" + sys.executable)
            # Everything the install step installs (static libraries and tools too: the
            # objects are shared, so they cost little more than the extension).
            run("cmake", "--build", tree, "-j", str(os.cpu_count() or 1))
        if not os.path.isdir(os.path.join(tree, "python", "hostccl")):
            raise SystemExit("hostccl setup: %s has no Python extension (is libtorch-dev installed?)" % tree)
        package = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(package, exist_ok=True)
        with tempfile.TemporaryDirectory() as staging:
            run("cmake", "--install", tree, "--prefix", staging)
            built = glob.glob(os.path.join(staging, "lib", "python3*", "dist-packages", "hostccl", "_C*.so"))
            if len(built) != 1:
                raise SystemExit("hostccl setup: the install of %s holds no single extension: %s" % (tree, built))
            shutil.copyfile(built[0], self.get_ext_fullpath(ext.name))
            # What torch the extension was built for (hostccl.torch checks it on import).
            shutil.copyfile(os.path.join(os.path.dirname(built[0]), "_build_info.py"),
                            os.path.join(package, "_build_info.py"))
            for name in LIBRARIES:
                self.copy_library(staging, name, package)

    @staticmethod
    def copy_library(staging, name, package):
        """The library's file under the name the extension asks for: its soname
        (name.so.MAJOR) when it has one, else name.so."""
        found = [os.path.basename(p) for p in glob.glob(os.path.join(staging, "lib", name + "*"))]
        sonames = [f for f in found if re.fullmatch(re.escape(name) + r"\.[0-9]+", f)]
        chosen = sonames or [f for f in found if f == name]
        if not chosen:
            raise SystemExit("hostccl setup: %s was not installed (found %s)" % (name, found))
        for f in chosen:
            shutil.copyfile(os.path.realpath(os.path.join(staging, "lib", f)), os.path.join(package, f))


setup(
    name="hostccl",
    version=project_version(),
    description="hostccl as a torch.distributed backend (HCCL's API on CPU hosts)",
    packages=["hostccl", "hostccl.torch"],
    py_modules=["_hostccl_autoload"],
    entry_points=open(os.path.join(HERE, "entry_points.txt")).read(),
    ext_modules=[Extension("hostccl._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
