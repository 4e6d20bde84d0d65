# hostccl_add_torch_extension(<target> PYTHON <interpreter> OUTPUT_DIR <dir>
#                             [RESULT_VAR <var>] [TREE_VAR <var>])
#
# Builds hostccl's torch extension (hostccl/_C) for the torch that <interpreter>
# imports, and lays out the package in <dir>/hostccl (an importable tree:
# PYTHONPATH=<dir>; "@TORCH@" in <target> and <dir> stands for torch's
# major.minor). One source serves torch 1.13 and 2.x (csrc/torch_compat.h); what
# differs per torch comes from asking the interpreter (torch_probe.py), not from
# find_package(Torch): a PyPI wheel's CMake config wants the CUDA toolkit, which a
# CPU backend does not use. Sets <var> (when given) to the torch version, or to ""
# when the interpreter has no torch or its extension cannot be built here, and
# <TREE_VAR> to <dir>.
set(HOSTCCL_TORCH_EXT_SOURCES
  csrc/module.cc csrc/process_group.cc csrc/group_lifecycle.cc csrc/compressed_average.cc csrc/coalescing.cc
  csrc/coalesced_tensors.cc csrc/bitwise_reduction.cc csrc/monitored_barrier.cc csrc/sparse_allreduce.cc
  csrc/shareable_allocator.cc csrc/work.cc csrc/completer.cc csrc/dtypes.cc)

function(hostccl_add_torch_extension target)
  cmake_parse_arguments(A "" "PYTHON;OUTPUT_DIR;RESULT_VAR;TREE_VAR" "" ${ARGN})
  if(A_RESULT_VAR)
    set(${A_RESULT_VAR} "" PARENT_SCOPE)
  endif()
  # Under pip (SKBUILD) without PYTHONPATH and PYTHONNOUSERSITE: its build isolation
  # sets them to hide the environment's packages, and the extension must be built for
  # the environment's torch.
  set(isolation_undone "")
  if(SKBUILD)
    set(isolation_undone ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE)
  endif()
  execute_process(COMMAND ${isolation_undone} ${A_PYTHON} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/torch_probe.py
                  OUTPUT_VARIABLE probe RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    string(STRIP "${probe}" probe)
    message(STATUS "hostccl torch extension for ${A_PYTHON}: not built (${probe})")
    return()
  endif()
  string(REPLACE "\n" ";" lines "${probe}")
  foreach(line ${lines})
    if(line MATCHES "^([a-z0-9_]+)=(.*)$")
      set(T_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  # The include list arrived ';'-joined inside one line: the loop above split it.
  string(REGEX MATCHALL "includes=[^\n]*" inc "${probe}")
  string(REPLACE "includes=" "" T_includes "${inc}")
  string(REPLACE "@TORCH@" "${T_major_minor}" A_OUTPUT_DIR "${A_OUTPUT_DIR}")
  string(REPLACE "." "_" id "${T_major_minor}")
  string(REPLACE "@TORCH@" "${id}" target "${target}")

  # torch 1.13 (Debian) brings no pybind11 of its own: the system's (pybind11-dev).
  set(pybind_found FALSE)
  foreach(dir ${T_includes} /usr/include)
    if(EXISTS ${dir}/pybind11/pybind11.h)
      set(pybind_found TRUE)
    endif()
  endforeach()
  set(libs "")
  foreach(lib c10 torch_cpu torch torch_python)
    find_library(HOSTCCL_TORCH_LIB_${lib}_${T_release} ${lib} PATHS ${T_lib_dir} NO_DEFAULT_PATH)
    list(APPEND libs ${HOSTCCL_TORCH_LIB_${lib}_${T_release}})
  endforeach()
  if(NOT pybind_found OR libs MATCHES "NOTFOUND")
    message(STATUS "hostccl torch extension for torch ${T_version}: not built (pybind11 headers: ${pybind_found}; "
                   "libraries in ${T_lib_dir}: ${libs})")
    return()
  endif()

  add_library(${target} MODULE ${HOSTCCL_TORCH_EXT_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME _C SUFFIX "${T_ext_suffix}"
    LIBRARY_OUTPUT_DIRECTORY ${A_OUTPUT_DIR}/hostccl
    CXX_VISIBILITY_PRESET hidden
    # libhccl: relative to where both are installed, or beside the extension where
    # `pip install ./python` puts the libraries (pyproject.toml).
    INSTALL_RPATH "${HOSTCCL_PYTHON_RPATH};$ORIGIN")
  target_include_directories(${target} SYSTEM PRIVATE ${T_includes} ${T_python_include})
  target_compile_definitions(${target} PRIVATE _GLIBCXX_USE_CXX11_ABI=${T_cxx11_abi} TORCH_EXTENSION_NAME=_C)
  foreach(tag compiler_type stdlib build_abi)
    if(DEFINED T_pybind11_${tag})
      string(TOUPPER ${tag} TAG)
      target_compile_definitions(${target} PRIVATE "PYBIND11_${TAG}=\"${T_pybind11_${tag}}\"")
    endif()
  endforeach()
  target_compile_options(${target} PRIVATE ${HOSTCCL_WARNINGS} -Wno-unused-parameter)
  target_link_libraries(${target} PRIVATE hccl hostccl_training ${libs})

  # The pure-Python part beside the extension, and what it was built for: importing
  # it under another torch fails with both versions named (hostccl/torch/__init__.py).
  file(GLOB_RECURSE py_sources CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/..
       ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../hostccl/*.py)
  foreach(f ${py_sources})
    configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../${f} ${A_OUTPUT_DIR}/${f} COPYONLY)
  endforeach()
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../_hostccl_autoload.py ${A_OUTPUT_DIR}/_hostccl_autoload.py COPYONLY)
  # The package's metadata with its entry points, so that torch's backend autoload
  # finds the tree on PYTHONPATH as it finds an installed package.
  set(info ${A_OUTPUT_DIR}/hostccl-${PROJECT_VERSION}.dist-info)
  file(WRITE ${info}/METADATA "Metadata-Version: 2.1\nName: hostccl\nVersion: ${PROJECT_VERSION}\n")
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../entry_points.txt ${info}/entry_points.txt COPYONLY)
  file(WRITE ${A_OUTPUT_DIR}/hostccl/_build_info.py
       "# Written by the build: the torch hostccl's extension was compiled against.\n"
       "TORCH_VERSION = \"${T_version}\"\n")
  if(A_RESULT_VAR)
    set(${A_RESULT_VAR} "${T_version}" PARENT_SCOPE)
  endif()
  if(A_TREE_VAR)
    set(${A_TREE_VAR} "${A_OUTPUT_DIR}" PARENT_SCOPE)
  endif()
endfunction()
