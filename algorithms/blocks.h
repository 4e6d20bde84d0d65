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

// n blocks, either listed or, when they split a range evenly, computed: an even
// layout costs nothing per block, so an op over thousands of ranks (or a simulator
// holding thousands of ranks' ops at once) allocates nothing for it.
class BlockLayout {
public:
    BlockLayout() = default;
    // n listed blocks, all empty until set().
    explicit BlockLayout(size_t n) : listed_(n), n_(n), even_(false) {}
    // `count` elements from `base` on, split into n contiguous blocks as evenly as
    // possible (the first count % n get one more; blocks are empty when count < n).
    static BlockLayout even(uint64_t count, uint32_t n, uint64_t base = 0) {
        BlockLayout b;
        b.n_ = n;
        b.perBlock_ = n == 0 ? 0 : count / n;
        b.extra_ = n == 0 ? 0 : count % n;
        b.base_ = base;
        return b;
    }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Block operator[](size_t i) const {
        if (!even_) return listed_[i];
        return Block{base_ + i * perBlock_ + (i < extra_ ? i : extra_), perBlock_ + (i < extra_ ? 1 : 0)};
    }
    Block back() const { return (*this)[n_ - 1]; }
    void set(size_t i, Block b) { listed_[i] = b; }  // listed layouts only

    class Iterator {
    public:
        Iterator(const BlockLayout* l, size_t i) : l_(l), i_(i) {}
        Block operator*() const { return (*l_)[i_]; }
        Iterator& operator++() {
            ++i_;
            return *this;
        }
        bool operator!=(const Iterator& o) const { return i_ != o.i_; }

    private:
        const BlockLayout* l_;
        size_t i_;
    };
    Iterator begin() const { return Iterator(this, 0); }
    Iterator end() const { return Iterator(this, n_); }

private:
    std::vector<Block> listed_;
    size_t n_ = 0;
    bool even_ = true;
    uint64_t perBlock_ = 0, extra_ = 0, base_ = 0;
};

inline BlockLayout evenBlocks(uint64_t count, uint32_t n) { return BlockLayout::even(count, n); }

// The V forms' counts and displacements; the plain forms' (every count equal, each
// block right after the previous) come out as an even layout, with nothing listed.
inline BlockLayout layoutFrom(const std::vector<uint64_t>& counts, const std::vector<uint64_t>& displs) {
    bool uniform = true;
    for (size_t i = 0; i < counts.size() && uniform; ++i)
        uniform = counts[i] == counts[0] && displs[i] == i * counts[0];
    if (uniform) return BlockLayout::even(counts.empty() ? 0 : counts[0] * counts.size(), uint32_t(counts.size()));
    BlockLayout b(counts.size());
    for (size_t i = 0; i < counts.size(); ++i) b.set(i, Block{displs[i], counts[i]});
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
