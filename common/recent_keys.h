// A bounded memory of keys that have ended (a destroyed communicator's rank): the
// newest `capacity` rememberings are kept and older ones forgotten, so that a process
// creating and destroying communicators for days keeps a flat footprint. A key
// remembered again counts from then; one forgotten (it started again) is no longer
// contained.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>

namespace hostccl {

template <typename Key>
class RecentKeys {
public:
    explicit RecentKeys(size_t capacity) : capacity_(capacity) {}

    void remember(const Key& key) {
        const uint64_t stamp = ++clock_;
        stamps_[key] = stamp;
        order_.emplace_back(key, stamp);
        while (order_.size() > capacity_) {
            // Only the newest stamp of a key makes it forgettable: one remembered
            // again since stays.
            auto it = stamps_.find(order_.front().first);
            if (it != stamps_.end() && it->second == order_.front().second) stamps_.erase(it);
            order_.pop_front();
        }
    }
    void forget(const Key& key) { stamps_.erase(key); }
    bool contains(const Key& key) const { return stamps_.count(key) != 0; }

private:
    size_t capacity_;
    uint64_t clock_ = 0;
    std::map<Key, uint64_t> stamps_;             // the key's newest stamp
    std::deque<std::pair<Key, uint64_t>> order_;  // oldest first
};

}  // namespace hostccl
