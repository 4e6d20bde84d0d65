// One source for both torch generations the package builds against:
// - torch 1.13 (Debian 12's python3-torch): a backend is a c10d::ProcessGroup subclass;
// - torch 2.x (PyPI): a backend is a c10d::Backend, which torch attaches to a
//   ProcessGroup it builds itself (ProcessGroup::_register_backend).
// Everything that differs between them is switched here or on HOSTCCL_TORCH2, as
// torch-ccl does on TORCH_VERSION_MAJOR/MINOR; the ops themselves are written once.
#pragma once

#include <torch/version.h>

#define HOSTCCL_TORCH_AT_LEAST(major, minor) \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#if TORCH_VERSION_MAJOR >= 2
#define HOSTCCL_TORCH2 1
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#define HOSTCCL_TORCH2 0
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include <torch/csrc/distributed/c10d/Types.hpp>

namespace hostccl::torch_backend {

#if HOSTCCL_TORCH2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

// c10d::Backend::split (split_group and DeviceMesh without new_group), its
// getBackendOptions and setTimeout came with torch 2.9; before it split_group was
// NCCL's (2.7) or torch's Python (2.8), and DeviceMesh builds groups with new_group.
#define HOSTCCL_TORCH_BACKEND_SPLIT HOSTCCL_TORCH_AT_LEAST(2, 9)

// c10::Allocator::allocate is const in 1.13, not in 2.x (which adds copy_data).
#if HOSTCCL_TORCH2
#define HOSTCCL_TORCH_ALLOCATE_CONST
#else
#define HOSTCCL_TORCH_ALLOCATE_CONST const
#endif

// PREMUL_SUM's factor (a number, or a one-element tensor) as a double. The
// supplement's type is NCCL's by name in 1.13 and generic in 2.x.
double premulFactor(const c10d::ReduceOp& op);

}  // namespace hostccl::torch_backend
