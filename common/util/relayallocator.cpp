#include "common/util/relayallocator.h"

#include <malloc.h>

namespace cloop::util {

void keepRelayBuffersResident()
{
    // Fixed values also stop glibc's dynamic threshold, which otherwise
    // follows the largest buffer freed so far.
    constexpr int kMiB = 1024 * 1024;
    ::mallopt(M_MMAP_THRESHOLD, 1 * kMiB);
    ::mallopt(M_TRIM_THRESHOLD, 8 * kMiB);
    ::mallopt(M_TOP_PAD, 1 * kMiB);
}

} // namespace cloop::util
