#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <unordered_map>

namespace cloop::device::usb::usbip {

// Counts the URBs of a USB/IP data phase as its bytes pass, without
// touching them: the commands the run's kernel submits and the answers the
// device's kernel sends back. It reads headers only and skips payloads by
// their framing; an answer's payload size depends on the direction of the
// command it answers, so submissions are remembered by sequence number
// until answered (a bounded number: past it the counting stops).
// A stream that breaks the framing stops the counting, not the stream:
// the kernels judge the bytes, this only reports them.
class UrbCounter
{
public:
    // Bytes on their way to the device (CMD_SUBMIT, CMD_UNLINK) and from it
    // (RET_SUBMIT, RET_UNLINK), in order, in pieces of any size.
    void fromRun(QByteArrayView bytes) { feed(m_toDevice, bytes, true); }
    void fromDevice(QByteArrayView bytes) { feed(m_toRun, bytes, false); }

    quint64 submitted() const { return m_toDevice.urbs; }
    quint64 answered() const { return m_toRun.urbs; }
    // The stream left the framing: the counts stopped where it did.
    bool hasLostTrack() const { return m_lost; }

    static constexpr std::size_t kPendingKept = 4096;

private:
    struct Way
    {
        QByteArray header; // a header's first bytes, until it is whole
        qint64 skip = 0; // payload bytes still to pass
        quint64 urbs = 0;
    };
    void feed(Way &way, QByteArrayView bytes, bool fromRun);
    bool takeHeader(Way &way, bool fromRun);

    Way m_toDevice;
    Way m_toRun;
    std::unordered_map<quint32, quint32> m_directionOf; // submission's sequence -> direction
    bool m_lost = false;
};

} // namespace cloop::device::usb::usbip
