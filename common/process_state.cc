#include "common/process_state.h"

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

namespace hostccl {

bool processEnded(pid_t pid) {
    if (::kill(pid, 0) != 0) return errno == ESRCH;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');  // the name may hold spaces and parentheses
    if (paren == std::string::npos || paren + 2 >= text.size()) return false;
    const char state = text[paren + 2];
    return state == 'Z' || state == 'X';
}

}  // namespace hostccl
