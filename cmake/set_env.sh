# hostccl: source this file, as CANN's set_env.sh, to build and run HCCL programs
# against this install:   source <prefix>/set_env.sh
# It finds its own directory, so the installed tree can be moved.
if [ -n "${BASH_SOURCE:-}" ]; then
  _hostccl_here="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
  _hostccl_here="${(%):-%x}"
else
  _hostccl_here="$0"
fi
_hostccl_prefix="$(cd "$(dirname "$_hostccl_here")" && pwd)"
export ASCEND_HOME_PATH="$_hostccl_prefix"      # the HCCL examples' Makefiles
export ASCEND_TOOLKIT_HOME="$_hostccl_prefix"
export ASCEND_DIR="$_hostccl_prefix"            # HCCL Test's Makefile (make ASCEND_DIR=...)
export LD_LIBRARY_PATH="$_hostccl_prefix/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LIBRARY_PATH="$_hostccl_prefix/lib64${LIBRARY_PATH:+:$LIBRARY_PATH}"
export PATH="$_hostccl_prefix/bin${PATH:+:$PATH}"
# The Python package (import hostccl.torch), when it was built: its dist-packages.
for _hostccl_py in "$_hostccl_prefix"/lib/python3*/dist-packages; do
  [ -d "$_hostccl_py/hostccl" ] && export PYTHONPATH="$_hostccl_py${PYTHONPATH:+:$PYTHONPATH}"
done
unset _hostccl_py
unset _hostccl_here _hostccl_prefix
