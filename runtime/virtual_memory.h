// ACL's virtual memory management on a host: an address range is reserved
// (PROT_NONE, no pages), physical memory is a memfd, and mapping puts a memfd's pages
// at an address inside a reservation. Mappings join the allocation table
// (runtime/memory.h), so peers on this host map them and single-copy transfers,
// the direct algorithms and RDMA zero-copy treat them as aclrtMalloc memory.
//
// Every call checks its arguments against the tables first and changes nothing on
// a refusal; the result says why (the caller logs it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hostccl::runtime::vmm {

// Sizes, offsets and mapped addresses are multiples of this (one huge page).
constexpr size_t kGranularity = 2u << 20;

enum class Status { Ok, Invalid, NoMemory };
struct Result {
    Status status = Status::Ok;
    std::string why;  // for Invalid / NoMemory
};

Result reserve(size_t size, size_t alignment, void* hint, void** out);
Result releaseReservation(void* base);  // refused while anything is mapped in it
Result createPhysical(size_t size, void** handle);
Result freePhysical(void* handle);  // pages live on while a mapping still shows them
Result map(void* address, size_t size, size_t offset, void* handle);
Result unmap(void* address);  // address: where a map() began

// Whether [address, address + size) is mapped, wholly, from `handle` starting at
// `offset` of it (what a communicator checks before activating memory).
bool mappedFrom(const void* address, size_t size, size_t offset, void* handle);
// Whether [address, address + size) lies inside one reservation.
bool insideReservation(const void* address, size_t size);

}  // namespace hostccl::runtime::vmm
