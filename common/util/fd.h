#pragma once

#include <utility>

#include <unistd.h>

namespace cloop::util {

// Owns one file descriptor, so every early return of a multi-step setup
// closes what it opened. Move-only: two owners would close it twice.
class Fd final
{
public:
    Fd() = default;
    explicit Fd(int fd)
        : m_fd(fd)
    { }
    Fd(Fd &&other) noexcept
        : m_fd(std::exchange(other.m_fd, -1))
    { }
    Fd &operator=(Fd &&other) noexcept
    {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() { reset(); }

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    // Hands the descriptor over; this object no longer closes it.
    int release() { return std::exchange(m_fd, -1); }
    void reset()
    {
        // close() is not retried on EINTR: on Linux the descriptor is gone
        // either way, and a retry could close one another thread just got.
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

} // namespace cloop::util
