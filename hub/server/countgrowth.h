#pragma once

#include <QtGlobal>

namespace cloop::hub {

// What a count that only grows grew by between two readings. One that went
// back belongs to something started again from zero (a stream opened
// again): all of it is new. Counts are never negative (parsers refuse them).
template <typename Count> quint64 countGrowth(Count now, Count before)
{
    return quint64(now >= before ? now - before : now);
}

} // namespace cloop::hub
