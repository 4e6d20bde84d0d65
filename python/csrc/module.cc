// hostccl._C: the process group class and its two constructors, for the Python side
// (hostccl/torch/__init__.py) that registers the backend with torch.distributed.
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.h"

namespace py = pybind11;
using hostccl::torch_backend::ProcessGroupHostccl;

PYBIND11_MODULE(_C, m) {
    m.doc() = "hostccl's torch.distributed backend (c10d ProcessGroup over hostccl's HCCL API)";
    // The base classes (ProcessGroup, Store) are torch's: registered by its module.
    py::module::import("torch.distributed");
    py::class_<ProcessGroupHostccl, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupHostccl>>(m, "ProcessGroupHostccl")
        .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout) {
                 return c10::make_intrusive<ProcessGroupHostccl>(store, rank, size, timeout);
             }),
             py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
             py::call_guard<py::gil_scoped_release>(),
             "A new communicator; rank 0's root info travels through the store.")
        .def(py::init([](ProcessGroupHostccl& parent, const std::vector<int64_t>& ranks, uint64_t groupId,
                         std::chrono::milliseconds timeout) {
                 return c10::make_intrusive<ProcessGroupHostccl>(parent, ranks, groupId, timeout);
             }),
             py::arg("parent"), py::arg("ranks"), py::arg("group_id"), py::arg("timeout"),
             py::call_guard<py::gil_scoped_release>(),
             "A subgroup of `parent` (its ranks in the parent, ascending): no new rendezvous.")
        .def("describe", &ProcessGroupHostccl::describe, "hosts, links and algorithms of the communicator");
}
