#pragma once

#include <QByteArray>

// Whole-buffer blocking socket IO for the stand-in's connection threads and
// its tests: the stream is the kernel's, and a short read or write ends the
// session there too (usbip_recv with MSG_WAITALL).
namespace cloop::testsupport::usb {

// False when the stream ended or failed first.
bool receiveAll(int fd, char *data, qsizetype size);
// MSG_NOSIGNAL: a peer gone ends the session, not the process.
bool sendAll(int fd, const char *data, qsizetype size);
inline bool sendAll(int fd, const QByteArray &bytes)
{
    return sendAll(fd, bytes.constData(), bytes.size());
}

} // namespace cloop::testsupport::usb
