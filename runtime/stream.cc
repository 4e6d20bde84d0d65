#include "runtime/stream.h"

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)  // g++
#define HOSTCCL_HAS_ASAN 1
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer)
#define HOSTCCL_HAS_ASAN 1
#endif
#endif
#ifdef HOSTCCL_HAS_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "common/fast_tls.h"
#include "common/thread_name.h"
#include "runtime/device.h"

namespace hostccl::runtime {

namespace {
HOSTCCL_FAST_TLS thread_local bool tIsWorker = false;

// Plain tasks (events, callbacks, the C++ API's markers) in a slot.
struct QueuedTask {
    Task task;
};
int runQueuedTask(QueuedTask& t) {
    int rc = t.task();
    t.task = nullptr;  // drop what the task holds before it counts as done
    return rc;
}
}  // namespace

// Objects in the ring own memory (an op's count arrays) that only the ring points to;
// a leak checker scans the heap and static data but not mapped memory, so it is told.
#ifdef HOSTCCL_HAS_ASAN
static void leakCheckerSees(void* at, size_t bytes, bool yes) {
    if (yes) __lsan_register_root_region(at, bytes);
    else __lsan_unregister_root_region(at, bytes);
}
#else
static void leakCheckerSees(void*, size_t, bool) {}
#endif

// Work queued past the ring's capacity. Like a slot, an entry keeps its object when
// it is reused for work of the same kind.
struct Stream::Spilled {
    explicit Spilled(const WorkKind& k) : kind(&k) { kind->create(work); }
    ~Spilled() { kind->destroy(work); }
    void holdKind(const WorkKind& k) {
        if (kind == &k) return;
        kind->destroy(work);
        k.create(work);
        kind = &k;
    }
    const WorkKind* kind;
    alignas(16) unsigned char work[kWorkBytes];
};

// The ring is mapped for the stream and unmapped with it: 128 KiB from the heap, made and
// freed by every communicator's stream, left the heap fragmented (a process creating
// and destroying communicators grew by 65 KiB a cycle). Mapped populated, its pages are
// all in before the first op: a page touched for the first time costs a fault (14 us on
// the 2-core Debian 12 test VM), one per 16 slots inside a timed burst of queued ops.
Stream::Stream(int32_t device) : device_(device) {
    void* at = mmap(nullptr, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                    -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    ring_ = static_cast<Slot*>(at);
    for (size_t i = 0; i < kSlots; ++i) new (&ring_[i]) Slot();
    leakCheckerSees(ring_, kSlots * sizeof(Slot), true);
    worker_ = std::thread([this] { run(); });
}

Stream::~Stream() {
    {
        std::lock_guard<std::mutex> lock(sleepMutex_);
        stopping_.store(true);
    }
    workReady_.notify_all();
    worker_.join();
    for (size_t i = 0; i < kSlots; ++i)
        if (ring_[i].kind != nullptr) ring_[i].kind->destroy(ring_[i].work);
    leakCheckerSees(ring_, kSlots * sizeof(Slot), false);
    munmap(ring_, kSlots * sizeof(Slot));
}

void* Stream::claim(const WorkKind& kind) {
    enqueueMutex_.lock();
    // Each side reads the other's counter only when its last reading says the ring is
    // full (here) or empty (runOne): while both are busy, the counters' lines stay put.
    if (tail_ - headSeen_ >= kSlots) headSeen_ = head_.load(std::memory_order_acquire);
    if (spill_.empty() && tail_ - headSeen_ < kSlots) {
        Slot& slot = ring_[tail_ % kSlots];
        if (slot.kind != &kind) {
            if (slot.kind != nullptr) slot.kind->destroy(slot.work);
            slot.kind = nullptr;
            kind.create(slot.work);
            slot.kind = &kind;
        }
        return slot.work;
    }
    if (spillFree_.empty()) {
        spill_.push_back(std::make_unique<Spilled>(kind));
    } else {
        spill_.push_back(std::move(spillFree_.back()));
        spillFree_.pop_back();
        spill_.back()->holdKind(kind);
    }
    return spill_.back()->work;
}

uint64_t Stream::publish() {
    // seq_cst stores then the load of sleeping_, against the worker's store of sleeping_
    // then its loads of these: either it sees the work or this sees it asleep.
    if (spill_.empty()) published_.store(++tail_);
    else spilled_.store(true);
    const uint64_t ticket = enqueued_.load(std::memory_order_relaxed) + 1;
    enqueued_.store(ticket, std::memory_order_release);
    enqueueMutex_.unlock();
    if (sleeping_.load()) wakeWorker();
    return ticket;
}

uint64_t Stream::enqueue(Task task) {
    return enqueueInPlace<QueuedTask, runQueuedTask>([&](QueuedTask& t) { t.task = std::move(task); });
}

void Stream::wakeWorker() {
    { std::lock_guard<std::mutex> lock(sleepMutex_); }  // the worker is waiting, or will see the change
    workReady_.notify_one();
}

bool Stream::takeBaton() {
    bool free = false;
    return consuming_.compare_exchange_strong(free, true, std::memory_order_acquire);
}

void Stream::dropBaton() {
    consuming_.store(false);  // seq_cst, against the worker's sleeping_ then consuming_
    if (sleeping_.load() && (hasWork() || stopping_.load())) wakeWorker();
}

bool Stream::hasWork() const {
    return head_.load(std::memory_order_relaxed) != published_.load() || spilled_.load();
}

bool Stream::runOne() {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    if (h == publishedSeen_) publishedSeen_ = published_.load(std::memory_order_acquire);
    if (h == publishedSeen_) return spilled_.load(std::memory_order_acquire) && runSpilled();
    Slot& slot = ring_[h % kSlots];
    const int rc = slot.kind->run(slot.work);
    head_.store(h + 1, std::memory_order_release);  // the slot is the queuing threads' again
    finished(rc);
    return true;
}

// Work spills only while the ring is full, and queuing threads use the ring again only
// once the list is empty: the ring's work, then the list's, keeps the order.
bool Stream::runSpilled() {
    std::deque<std::unique_ptr<Spilled>> batch;
    {
        std::lock_guard<std::mutex> lock(enqueueMutex_);
        if (head_.load(std::memory_order_relaxed) != published_.load(std::memory_order_relaxed))
            return true;  // filled meanwhile, before the spill: older than it
        batch.swap(spill_);
        spilled_.store(false);
    }
    // The last op is reported finished only once the entries are back (below): a thread
    // that synchronized and queues again then finds them, instead of racing this one.
    const size_t ran = batch.size();
    int lastRc = 0;
    for (size_t i = 0; i < ran; ++i) {
        const int rc = batch[i]->kind->run(batch[i]->work);
        if (i + 1 < ran) finished(rc);
        else lastRc = rc;
    }
    // Entries go back to the queuing threads: freed here, each was a free of another
    // thread's allocation, 13 % of the receiving stream thread's time in 2-process runs
    // of 200,000 queued 8-byte broadcasts (reused: 0.51-0.52 -> 0.47-0.49 us per op in
    // runs of 20,000). Past kSpillKept they are freed (when batch goes, unlocked).
    {
        std::lock_guard<std::mutex> lock(enqueueMutex_);
        while (!batch.empty() && spillFree_.size() < kSpillKept) {
            spillFree_.push_back(std::move(batch.back()));
            batch.pop_back();
        }
    }
    if (ran > 0) finished(lastRc);
    return true;
}

bool Stream::runHere(uint64_t ticket) {
    const uint32_t limit = callersRunUpTo_.load(std::memory_order_relaxed);
    if (limit == 0 || completed_.load(std::memory_order_acquire) >= ticket || !takeBaton()) return false;
    const uint64_t done = completed_.load(std::memory_order_relaxed);
    // Everything up to the ticket is in the ring (a spill means a queue far past any limit).
    if (done >= ticket || ticket - done > limit || spilled_.load()) {
        dropBaton();
        return false;
    }
    const int32_t callerDevice = currentDevice();
    setCurrentDevice(device_);  // as on the worker
    while (completed_.load(std::memory_order_relaxed) < ticket && runOne()) {
    }
    setCurrentDevice(callerDevice);
    dropBaton();
    return true;
}

int Stream::synchronize(Deadline deadline) {
    const uint64_t target = enqueued_.load(std::memory_order_acquire);
    if (deadline.isNever()) runHere(target);  // a wait with a deadline must be free to return at it
    std::unique_lock<std::mutex> lock(doneMutex_);
    // seq_cst store then load, against the runner's increment then load: either it
    // sees this wakeAt_ or this sees its count, so the wake-up cannot be missed.
    auto done = [&] {
        wakeAt_.store(std::min(wakeAt_.load(), target));  // (re)arm after every wake-up
        return completed_.load() >= target;
    };
    if (deadline.isNever()) {
        workDone_.wait(lock, done);
    } else if (!workDone_.wait_until(lock, deadline.at(), done)) {
        return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
    }
    int err = firstError_;
    firstError_ = 0;
    return err;
}

bool Stream::onWorkerThread() { return tIsWorker; }

// Runs while there is work and no caller holds the baton; sleeps otherwise.
void Stream::run() {
    nameThisThread("hccl-stream");
    tIsWorker = true;
    setCurrentDevice(device_);  // tasks see the stream's device as current
    for (;;) {
        if (takeBaton()) {
            while (runOne()) {
            }
            consuming_.store(false);
        }
        std::unique_lock<std::mutex> lock(sleepMutex_);
        sleeping_.store(true);  // seq_cst, then the loads in hasWork and of consuming_
        // While a caller runs tasks (runHere) the worker takes none, even when stopping.
        workReady_.wait(lock, [&] { return (hasWork() || stopping_.load()) && !consuming_.load(); });
        sleeping_.store(false, std::memory_order_relaxed);
        if (stopping_.load() && !hasWork()) return;
    }
}

void Stream::finished(int rc) {
    lastResult_ = rc;
    if (rc != 0) {
        std::lock_guard<std::mutex> lock(doneMutex_);
        if (firstError_ == 0) firstError_ = rc;
    }
    // Only the baton holder writes the count: a store, not a locked add.
    const uint64_t count = completed_.load(std::memory_order_relaxed) + 1;
    completed_.store(count);  // seq_cst, then the load of wakeAt_
    if (count >= wakeAt_.load()) {
        std::lock_guard<std::mutex> lock(doneMutex_);
        wakeAt_.store(UINT64_MAX);
        workDone_.notify_all();
    }
}

namespace {
struct StreamTable {
    std::mutex mutex;
    std::unordered_map<Stream*, std::shared_ptr<Stream>> live;
    std::shared_ptr<Stream> defaultStream;
    std::atomic<uint64_t> generation{0};  // bumped under the mutex when a stream goes away
};
StreamTable& streamTable() {
    static StreamTable* t = new StreamTable;  // outlives static destructors of users
    return *t;
}

std::shared_ptr<Stream> lookUp(StreamTable& t, aclrtStream handle) {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (handle == nullptr) {
        if (!t.defaultStream) t.defaultStream = std::make_shared<Stream>(currentDeviceOr(0));
        return t.defaultStream;
    }
    auto it = t.live.find(static_cast<Stream*>(handle));
    return it == t.live.end() ? nullptr : it->second;
}
}  // namespace

// Every queued op asks this. Each thread remembers the last stream it resolved (weakly:
// the cache never keeps a destroyed stream's worker alive), so a call takes no global
// lock while no stream has gone away since.
std::shared_ptr<Stream> resolveStream(aclrtStream handle) {
    struct Last {
        aclrtStream handle = nullptr;
        uint64_t generation = UINT64_MAX;
        std::weak_ptr<Stream> stream;
    };
    HOSTCCL_FAST_TLS thread_local Last last;
    StreamTable& t = streamTable();
    const uint64_t generation = t.generation.load(std::memory_order_acquire);
    if (handle == last.handle && generation == last.generation)
        if (std::shared_ptr<Stream> s = last.stream.lock()) return s;
    std::shared_ptr<Stream> s = lookUp(t, handle);
    if (s) last = Last{handle, generation, s};
    return s;
}

aclrtStream createStream() {
    auto s = std::make_shared<Stream>(currentDeviceOr(0));
    Stream* raw = s.get();
    StreamTable& t = streamTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.live.emplace(raw, std::move(s));
    return raw;
}

// The last owner runs what is queued and joins the worker: usually this call, or
// an API call still holding the stream.
bool destroyStream(aclrtStream handle) {
    std::shared_ptr<Stream> victim;
    {
        StreamTable& t = streamTable();
        std::lock_guard<std::mutex> lock(t.mutex);
        auto it = t.live.find(static_cast<Stream*>(handle));
        if (it == t.live.end()) return false;
        victim = std::move(it->second);
        t.live.erase(it);
        t.generation.fetch_add(1, std::memory_order_release);
    }
    return true;  // victim's destructor drains and joins outside the lock
}

void synchronizeAllStreams() {
    std::vector<std::shared_ptr<Stream>> all;
    {
        StreamTable& t = streamTable();
        std::lock_guard<std::mutex> lock(t.mutex);
        for (auto& entry : t.live) all.push_back(entry.second);
        if (t.defaultStream) all.push_back(t.defaultStream);
    }
    for (auto& s : all) s->synchronize(Deadline::never());
}

}  // namespace hostccl::runtime
