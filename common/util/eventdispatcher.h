#pragma once

#include <QtGlobal>

namespace cloop::util {

// Picks Qt's own poll()-based event dispatcher over GLib's for a process
// that may hold thousands of sockets (the hub): GLib's keeps its socket
// notifiers in lists it walks on every change, which at 10,000 sessions
// cost most of a core while they were idle. Call before the
// QCoreApplication exists; an operator's own QT_NO_GLIB is kept.
inline void preferQtEventDispatcher()
{
    if (!qEnvironmentVariableIsSet("QT_NO_GLIB"))
        qputenv("QT_NO_GLIB", "1");
}

} // namespace cloop::util
