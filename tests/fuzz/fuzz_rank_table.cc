// libFuzzer target: the rank-table (cluster info) JSON parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/bootstrap/rank_table.h"
#include "tests/fuzz/fuzz_quiet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    hostccl::RankTable table;
    std::string why;
    hostccl::parseRankTable(std::string(reinterpret_cast<const char*>(data), size), &table, &why);
    return 0;
}
