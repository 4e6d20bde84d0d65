// Thread-local variables read on every op (which thread runs a stream, the last handle
// a thread resolved, its current device). In a shared library the default TLS model
// reaches them through a call to __tls_get_addr, which profiled at 5-6 % of an 8-byte
// op on the stream's thread; the initial-exec model reads them at a fixed offset from
// the thread pointer. A library loaded with dlopen (Python importing the torch
// backend) takes such variables from the few hundred bytes of static TLS glibc keeps
// spare for it, so only small variables get this (under 200 bytes in all).
#pragma once

#define HOSTCCL_FAST_TLS __attribute__((tls_model("initial-exec")))
