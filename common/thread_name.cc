#include "common/thread_name.h"

#include <pthread.h>

#include <cstring>

namespace hostccl {

void nameThisThread(const char* name) {
    char shortName[16];  // the kernel's limit, terminator included
    std::strncpy(shortName, name, sizeof(shortName) - 1);
    shortName[sizeof(shortName) - 1] = '\0';
    pthread_setname_np(pthread_self(), shortName);
}

}  // namespace hostccl
