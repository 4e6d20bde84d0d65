// The C entry points of libascendcl: argument checks, then the runtime objects.
// Nothing here throws across the C ABI.
#include <sys/sysinfo.h>

#include <atomic>
#include <cstring>

#include "acl/acl.h"
#include "common/log.h"
#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

using namespace hostccl::runtime;
using hostccl::Deadline;

namespace {
std::atomic<bool> gInitialized{false};

// Contexts carry only their device: one object per created context.
struct Context {
    int32_t device;
};
thread_local Context* tContext = nullptr;

aclError invalid(const char* fn, const char* why) {
    hostccl::log::error("{}: {}", fn, why);
    return ACL_ERROR_INVALID_PARAM;
}
}  // namespace

extern "C" {

aclError aclInit(const char* /*configPath*/) {
    bool expected = false;
    return gInitialized.compare_exchange_strong(expected, true) ? ACL_SUCCESS : ACL_ERROR_REPEAT_INITIALIZE;
}

aclError aclFinalize(void) {
    bool expected = true;
    if (!gInitialized.compare_exchange_strong(expected, false)) return ACL_ERROR_REPEAT_FINALIZE;
    synchronizeAllStreams();
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
    if (!deviceValid(deviceId)) return ACL_ERROR_RT_INVALID_DEVICEID;
    setCurrentDevice(deviceId);
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    if (!deviceValid(deviceId)) return ACL_ERROR_RT_INVALID_DEVICEID;
    return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t* deviceId) {
    if (deviceId == nullptr) return invalid("aclrtGetDevice", "deviceId is NULL");
    if (currentDevice() < 0) return ACL_ERROR_INVALID_DEVICE;
    *deviceId = currentDevice();
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
    if (count == nullptr) return invalid("aclrtGetDeviceCount", "count is NULL");
    *count = deviceCount();
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
    synchronizeAllStreams();
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode* runMode) {
    if (runMode == nullptr) return invalid("aclrtGetRunMode", "runMode is NULL");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
    return mode <= ACL_RT_OVERFLOW_MODE_INFNAN ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

// A 910B name keeps HCCL programs on their classic (non-950, non-310) code paths.
const char* aclrtGetSocName(void) { return "Ascend910B1"; }

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    if (context == nullptr) return invalid("aclrtCreateContext", "context is NULL");
    if (!deviceValid(deviceId)) return ACL_ERROR_RT_INVALID_DEVICEID;
    auto* c = new Context{deviceId};
    setCurrentDevice(deviceId);
    tContext = c;
    *context = c;
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
    if (context == nullptr) return invalid("aclrtDestroyContext", "context is NULL");
    auto* c = static_cast<Context*>(context);
    if (tContext == c) tContext = nullptr;
    delete c;
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
    if (context == nullptr) return invalid("aclrtSetCurrentContext", "context is NULL");
    tContext = static_cast<Context*>(context);
    setCurrentDevice(tContext->device);
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
    if (context == nullptr) return invalid("aclrtGetCurrentContext", "context is NULL");
    *context = tContext;
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/) {
    if (devPtr == nullptr) return invalid("aclrtMalloc", "devPtr is NULL");
    if (size == 0) return invalid("aclrtMalloc", "size is 0");
    void* p = allocate(size);
    if (p == nullptr) return ACL_ERROR_RT_MEMORY_ALLOCATION;
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
    if (devPtr == nullptr) return invalid("aclrtFree", "devPtr is NULL");
    return release(devPtr) ? ACL_SUCCESS : invalid("aclrtFree", "pointer was not returned by aclrtMalloc");
}

aclError aclrtMallocHost(void** hostPtr, size_t size) { return aclrtMalloc(hostPtr, size, ACL_MEM_MALLOC_HUGE_FIRST); }

aclError aclrtFreeHost(void* hostPtr) { return aclrtFree(hostPtr); }

static aclError checkCopy(const char* fn, void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind) {
    if (count > destMax) return invalid(fn, "count exceeds destMax");
    if (count > 0 && (dst == nullptr || src == nullptr)) return invalid(fn, "NULL buffer");
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) return invalid(fn, "bad kind");
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    aclError rc = checkCopy("aclrtMemcpy", dst, destMax, src, count, kind);
    if (rc != ACL_SUCCESS) return rc;
    if (count > 0) std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    aclError rc = checkCopy("aclrtMemcpyAsync", dst, destMax, src, count, kind);
    if (rc != ACL_SUCCESS) return rc;
    auto s = resolveStream(stream);
    if (s == nullptr) return invalid("aclrtMemcpyAsync", "not a live stream");
    s->enqueue([=] {
        if (count > 0) std::memmove(dst, src, count);
        return 0;
    });
    return ACL_SUCCESS;
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count > maxCount) return invalid("aclrtMemset", "count exceeds maxCount");
    if (count > 0 && devPtr == nullptr) return invalid("aclrtMemset", "devPtr is NULL");
    if (count > 0) std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
    if (count > maxCount) return invalid("aclrtMemsetAsync", "count exceeds maxCount");
    if (count > 0 && devPtr == nullptr) return invalid("aclrtMemsetAsync", "devPtr is NULL");
    auto s = resolveStream(stream);
    if (s == nullptr) return invalid("aclrtMemsetAsync", "not a live stream");
    s->enqueue([=] {
        if (count > 0) std::memset(devPtr, value, count);
        return 0;
    });
    return ACL_SUCCESS;
}

aclError aclrtGetMemInfo(aclrtMemAttr /*attr*/, size_t* freeBytes, size_t* totalBytes) {
    if (freeBytes == nullptr || totalBytes == nullptr) return invalid("aclrtGetMemInfo", "NULL output");
    struct sysinfo si {};
    if (sysinfo(&si) != 0) return ACL_ERROR_RT_FAILURE;
    *totalBytes = static_cast<size_t>(si.totalram) * si.mem_unit;
    *freeBytes = static_cast<size_t>(si.freeram + si.bufferram) * si.mem_unit;
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    if (stream == nullptr) return invalid("aclrtCreateStream", "stream is NULL");
    *stream = createStream();
    return ACL_SUCCESS;
}

aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t /*priority*/, uint32_t /*flag*/) {
    return aclrtCreateStream(stream);
}

aclError aclrtDestroyStream(aclrtStream stream) {
    if (stream == nullptr) return invalid("aclrtDestroyStream", "stream is NULL");
    return destroyStream(stream) ? ACL_SUCCESS : invalid("aclrtDestroyStream", "not a live stream");
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    auto s = resolveStream(stream);
    if (s == nullptr) return invalid("aclrtSynchronizeStream", "not a live stream");
    return s->synchronize(Deadline::never());
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    auto s = resolveStream(stream);
    if (s == nullptr) return invalid("aclrtSynchronizeStreamWithTimeout", "not a live stream");
    if (timeout < -1) return invalid("aclrtSynchronizeStreamWithTimeout", "timeout must be >= -1");
    Deadline d = timeout == -1 ? Deadline::never() : Deadline::after(std::chrono::milliseconds(timeout));
    return s->synchronize(d);
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t /*mode*/) {
    return resolveStream(stream) ? ACL_SUCCESS : invalid("aclrtSetStreamFailureMode", "not a live stream");
}

aclError aclrtCreateEvent(aclrtEvent* event) {
    if (event == nullptr) return invalid("aclrtCreateEvent", "event is NULL");
    *event = createEvent();
    return ACL_SUCCESS;
}

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t /*flag*/) { return aclrtCreateEvent(event); }

aclError aclrtDestroyEvent(aclrtEvent event) {
    return destroyEvent(event) ? ACL_SUCCESS : invalid("aclrtDestroyEvent", "not a live event");
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    auto e = resolveEvent(event);
    auto s = resolveStream(stream);
    if (e == nullptr || s == nullptr) return invalid("aclrtRecordEvent", "not a live event or stream");
    e->record(*s);
    return ACL_SUCCESS;
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    auto e = resolveEvent(event);
    auto s = resolveStream(stream);
    if (e == nullptr || s == nullptr) return invalid("aclrtResetEvent", "not a live event or stream");
    e->reset(*s);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
    auto e = resolveEvent(event);
    if (e == nullptr) return invalid("aclrtSynchronizeEvent", "not a live event");
    e->synchronize();
    return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventStatus* status) {
    auto e = resolveEvent(event);
    if (e == nullptr || status == nullptr) return invalid("aclrtQueryEventStatus", "bad event or NULL status");
    *status = e->complete() ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
    auto a = resolveEvent(startEvent);
    auto b = resolveEvent(endEvent);
    if (ms == nullptr || a == nullptr || b == nullptr) return invalid("aclrtEventElapsedTime", "bad arguments");
    return Event::elapsedMs(*a, *b, ms) ? ACL_SUCCESS : invalid("aclrtEventElapsedTime", "event not completed");
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    auto e = resolveEvent(event);
    auto s = resolveStream(stream);
    if (e == nullptr || s == nullptr) return invalid("aclrtStreamWaitEvent", "not a live event or stream");
    e->makeStreamWait(*s);
    return ACL_SUCCESS;
}

aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
    setOpWaitTimeoutSeconds(timeout);
    return ACL_SUCCESS;
}

}  // extern "C"
