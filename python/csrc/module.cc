// hostccl._C: the process group class and its two constructors, for the Python side
// (hostccl/torch/__init__.py) that registers the backend with torch.distributed.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <hostccl/hostccl.h>

#include "completer.h"
#include "hook_compressor.h"
#include "process_group.h"
#include "shareable_allocator.h"

namespace py = pybind11;
using hostccl::torch_backend::HookCompressor;
using hostccl::torch_backend::ProcessGroupHostccl;

PYBIND11_MODULE(_C, m) {
    m.doc() = "hostccl's torch.distributed backend (a c10d ProcessGroup on torch 1.13, a c10d Backend on 2.x)";
    // The base classes (ProcessGroup or Backend, Store) are torch's: registered by its module.
    py::module::import("torch.distributed");
    py::class_<ProcessGroupHostccl, hostccl::torch_backend::BackendBase, c10::intrusive_ptr<ProcessGroupHostccl>>(
        m, "ProcessGroupHostccl")
        .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout) {
                 return c10::make_intrusive<ProcessGroupHostccl>(store, rank, size, timeout);
             }),
             py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
             py::call_guard<py::gil_scoped_release>(),
             "A new communicator; rank 0's root info travels through the store.")
        .def(py::init([](ProcessGroupHostccl& parent, const std::vector<int64_t>& ranks, uint64_t groupId,
                         std::chrono::milliseconds timeout, const c10::intrusive_ptr<c10d::Store>& store) {
                 return c10::make_intrusive<ProcessGroupHostccl>(parent, ranks, groupId, timeout, store);
             }),
             py::arg("parent"), py::arg("ranks"), py::arg("group_id"), py::arg("timeout"), py::arg("store"),
             py::call_guard<py::gil_scoped_release>(),
             "A subgroup of `parent` (its ranks in the parent, ascending): no new rendezvous.")
        .def("describe", &ProcessGroupHostccl::describe, "hosts, links and algorithms of the communicator")
        .def("compressed_average", &ProcessGroupHostccl::compressedAverage, py::arg("compressor"), py::arg("bucket"),
             py::arg("key"), py::call_guard<py::gil_scoped_release>(),
             "Averages the float32 bucket in place with the compressor (error feedback per key); returns a Work.");
    m.def(
        "launcher_rank",
        []() -> py::object {
            uint32_t rank = 0, size = 0, localRank = 0;
            if (HostcclGetLauncherRank(&rank, &size, &localRank) != HCCL_SUCCESS) return py::none();
            return py::make_tuple(rank, size, localRank);
        },
        "(rank, size, local rank) from mpirun / mpiexec / srun / torchrun variables, or None");
    m.def(
        "launcher_meeting_point",
        []() -> py::object {
            char host[256];
            uint32_t port = 0;
            if (HostcclGetLauncherMeetingPoint(host, sizeof host, &port) != HCCL_SUCCESS) return py::none();
            return py::make_tuple(std::string(host), port);
        },
        "(host, port) where a launcher-started job meets (HOSTCCL_ROOT_ADDR, MASTER_*, or srun's step), or None");
    m.def("drain_futures", &hostccl::torch_backend::Completer::drainAll, py::arg("seconds"),
          py::call_guard<py::gil_scoped_release>(),
          "waits until every op's future has completed and its callbacks have returned; False after `seconds`");
    m.def("use_shareable_memory", &hostccl::torch_backend::useShareableMemory, py::arg("min_bytes"),
          py::arg("cache_bytes"), "CPU tensors of min_bytes and more from memory peer processes can map");
    m.def("stop_shareable_memory", &hostccl::torch_backend::stopShareableMemory,
          "torch's CPU allocator back to the one before use_shareable_memory");
    m.def("shareable_memory_active", &hostccl::torch_backend::shareableMemoryActive);
    m.def("shareable_memory_stats", [] {
        hostccl::torch_backend::ShareableMemoryStats s = hostccl::torch_backend::shareableMemoryStats();
        py::dict d;
        d["blocks_allocated"] = s.blocksAllocated;
        d["blocks_reused"] = s.blocksReused;
        d["bytes_cached"] = s.bytesCached;
        d["bytes_in_use"] = s.bytesInUse;
        return d;
    });
    // hostccl::Error is a std::runtime_error: a bad spec arrives as RuntimeError.
    py::class_<HookCompressor, std::shared_ptr<HookCompressor>>(m, "GradientCompressor")
        .def(py::init<const std::string&>(), py::arg("spec"),
             "spec: 'topk[:ratio]', 'sign' (1 bit per entry), 'fp16', 'bf16' or 'none'")
        .def_property_readonly("name", &HookCompressor::name)
        .def_property_readonly("wire_bytes", &HookCompressor::wireBytes, "bytes sent so far")
        .def_property_readonly("fp32_wire_bytes", &HookCompressor::fp32WireBytes,
                               "what fp32 allreduces of the same buckets would have sent");
}
