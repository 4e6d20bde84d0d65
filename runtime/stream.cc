#include "runtime/stream.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "common/thread_name.h"
#include "runtime/device.h"

namespace hostccl::runtime {

namespace {
// Queue capacity written once up front: a burst of queued tasks that grew the queue
// inside a timed loop paid a page fault per new page (14 us each on the 2-core Debian 12 test VM).
constexpr size_t kPrefaultedTasks = 1024;
void prefault(std::vector<Task>* v) {
    v->resize(kPrefaultedTasks);
    v->clear();  // keeps the capacity
}
}  // namespace

Stream::Stream(int32_t device) : device_(device) {
    prefault(&queue_);
    worker_ = std::thread([this] { run(); });
}

Stream::~Stream() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_.store(true, std::memory_order_release);
    }
    workReady_.notify_all();
    worker_.join();
}

uint64_t Stream::enqueue(Task task) {
    bool wake;
    uint64_t ticket;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(task));
        ticket = ++enqueued_;
        wake = workerAsleep_ && !running_;
    }
    if (wake) workReady_.notify_one();
    return ticket;
}

bool Stream::runHere(uint64_t ticket) {
    const uint32_t limit = callersRunUpTo_.load(std::memory_order_relaxed);
    if (limit == 0) return false;
    std::vector<Task> mine;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (running_ || taken_ >= ticket || queue_.empty()) return false;
        const size_t n = std::min<uint64_t>(queue_.size(), ticket - taken_);
        if (n > limit) return false;
        mine.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
        queue_.erase(queue_.begin(), queue_.begin() + n);
        taken_ += n;
        running_ = true;
    }
    const int32_t callerDevice = currentDevice();
    setCurrentDevice(device_);  // as on the worker
    runTasks(mine);
    setCurrentDevice(callerDevice);
    bool wake;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = false;
        wake = workerAsleep_;  // it waits while running_: tasks queued since, or stopping
    }
    if (wake) workReady_.notify_one();
    return true;
}

int Stream::synchronize(Deadline deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t target = enqueued_;
    if (deadline.isNever()) {  // a wait with a deadline must be free to return at it
        lock.unlock();
        runHere(target);
        lock.lock();
    }
    // seq_cst store then load, against the worker's increment then load: either it
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

namespace {
thread_local bool tIsWorker = false;
}

bool Stream::onWorkerThread() { return tIsWorker; }

// Runs tasks in batches: one lock round per batch, not two per task.
void Stream::run() {
    nameThisThread("hccl-stream");
    tIsWorker = true;
    setCurrentDevice(device_);  // tasks see the stream's device as current
    std::vector<Task> batch;
    prefault(&batch);  // swapped with queue_: both buffers take turns
    bool ran = false;
    while (takeBatch(&batch, ran)) {
        runTasks(batch);
        batch.clear();
        ran = true;
    }
}

void Stream::runTasks(std::vector<Task>& tasks) {
    for (Task& task : tasks) {
        int rc = task();
        task = nullptr;  // drop what the task holds before it counts as done
        lastResult_ = rc;
        finished(rc);
    }
}

bool Stream::takeBatch(std::vector<Task>* batch, bool ranLast) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (ranLast) running_ = false;
    // While a caller runs tasks (runHere) the worker takes none, even when stopping.
    while (running_ || (queue_.empty() && !stopping_)) {
        workerAsleep_ = true;
        workReady_.wait(lock);
        workerAsleep_ = false;
    }
    batch->swap(queue_);
    taken_ += batch->size();
    running_ = !batch->empty();
    return !batch->empty();
}

void Stream::finished(int rc) {
    if (rc != 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (firstError_ == 0) firstError_ = rc;
    }
    if (completed_.fetch_add(1) + 1 >= wakeAt_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
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
    thread_local Last last;
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
