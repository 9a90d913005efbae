#pragma once

#include "common/util/epolleventdispatcher.h"

#include <QCoreApplication>

namespace cloop::util {

// Gives the main thread of a process that may hold thousands of sockets
// (the hub), or relays frames (every daemon), the epoll event dispatcher. Call before the
// QCoreApplication exists. CLOOP_EVENT_LOOP=qt keeps Qt's own, for an operator who must rule it
// out.
inline void installScalableEventDispatcher()
{
    if (qgetenv("CLOOP_EVENT_LOOP") == "qt")
        return;
    QCoreApplication::setEventDispatcher(new EpollEventDispatcher);
}

} // namespace cloop::util
