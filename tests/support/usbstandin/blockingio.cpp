#include "tests/support/usbstandin/blockingio.h"

#include <sys/socket.h>

#include <cerrno>

namespace cloop::testsupport::usb {

bool receiveAll(int fd, char *data, qsizetype size)
{
    while (size > 0) {
        const ssize_t got = ::recv(fd, data, size_t(size), 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        data += got;
        size -= got;
    }
    return true;
}

bool sendAll(int fd, const char *data, qsizetype size)
{
    while (size > 0) {
        const ssize_t sent = ::send(fd, data, size_t(size), MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent <= 0)
            return false;
        data += sent;
        size -= sent;
    }
    return true;
}

} // namespace cloop::testsupport::usb
