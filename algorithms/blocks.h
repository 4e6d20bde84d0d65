// Per-rank blocks of a buffer, in elements. Ring algorithms move whole blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hostccl {

struct Block {
    uint64_t offset = 0;  // elements
    uint64_t count = 0;
};
using BlockLayout = std::vector<Block>;

// `count` elements split into n contiguous blocks as evenly as possible (the first
// count % n blocks get one more); blocks may be empty when count < n.
inline BlockLayout evenBlocks(uint64_t count, uint32_t n) {
    BlockLayout b(n);
    uint64_t base = count / n, extra = count % n, off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        b[i].offset = off;
        b[i].count = base + (i < extra ? 1 : 0);
        off += b[i].count;
    }
    return b;
}

inline BlockLayout layoutFrom(const std::vector<uint64_t>& counts, const std::vector<uint64_t>& displs) {
    BlockLayout b(counts.size());
    for (size_t i = 0; i < counts.size(); ++i) b[i] = Block{displs[i], counts[i]};
    return b;
}

// One past the last element any block covers.
inline uint64_t layoutEnd(const BlockLayout& b) {
    uint64_t end = 0;
    for (const auto& x : b) end = x.offset + x.count > end ? x.offset + x.count : end;
    return end;
}

// Whether byte ranges [a, a+an) and [b, b+bn) share a byte.
inline bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
    auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    return an > 0 && bn > 0 && pa < pb + bn && pb < pa + an;
}

inline uint64_t maxBlockCount(const BlockLayout& b) {
    uint64_t m = 0;
    for (const auto& x : b) m = x.count > m ? x.count : m;
    return m;
}

}  // namespace hostccl
