"""Prints, one `key=value` a line, what building hostccl's torch extension for this
interpreter needs to know (python/cmake/torch_extension.cmake reads it): the torch
version, its headers and libraries, its C++ ABI and pybind11 ABI tags, and this
Python's headers and extension suffix. Exits 1 (printing why) without torch."""

import os
import sys
import sysconfig

os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # an installed hostccl must not load itself here
try:
    import torch
    import torch.utils.cpp_extension as cpp
except Exception as e:  # noqa: BLE001 (any failure means: no usable torch here)
    print("error=%s: %s" % (type(e).__name__, e))
    sys.exit(1)

release = torch.__version__.split("+")[0]
major, minor = (int(x) for x in release.split(".")[:2])
out = {
    "version": torch.__version__,
    "release": release,
    "major_minor": "%d.%d" % (major, minor),
    "includes": ";".join(p for p in cpp.include_paths() if os.path.isdir(p)),
    "lib_dir": os.path.join(os.path.dirname(torch.__file__), "lib"),
    "cxx11_abi": int(torch._C._GLIBCXX_USE_CXX11_ABI),
    "python_include": sysconfig.get_paths()["include"],
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "python_version": "%d.%d" % sys.version_info[:2],
}
# pybind11 2.x keeps its ABI tags in torch._C; with pybind11 3 (torch >= 2.9) they are gone.
for tag in ("COMPILER_TYPE", "STDLIB", "BUILD_ABI"):
    value = getattr(torch._C, "_PYBIND11_" + tag, None)
    if value is not None:
        out["pybind11_" + tag.lower()] = value
for key, value in out.items():
    print("%s=%s" % (key, value))
