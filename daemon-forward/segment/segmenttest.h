#pragma once

#include "common/device/l2/packetsocket.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSocketNotifier>
#include <QTimer>

#include <chrono>
#include <memory>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::forward {

// Answers the hub's Test on a segment forwarder: listens on the interface
// for a moment, promiscuous as when carrying it, then writes one JSON
// report on the channel and closes it: link state, MTU, counters and the
// first frames seen. Nothing is sent on the segment. A problem (no such
// interface, no CAP_NET_RAW) is part of the report, so the operator reads
// it where they clicked.
class SegmentTest final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SegmentTest)

public:
    struct Options
    {
        std::chrono::milliseconds listen { 1500 };
        int maxFrames = 8;
    };

    SegmentTest(QString interfaceName, tunnel::Channel *channel, Options options,
        QObject *parent = nullptr);

    // Deletes itself once the report is written or the channel ends.
    void start();

    // "ARP who-has 192.0.2.1 tell 192.0.2.2", "IPv4 UDP 192.0.2.2 → 192.0.2.9", …
    static QJsonObject describeFrame(QByteArrayView frame, const device::l2::PacketAuxdata &aux);

private:
    void onReadable();
    void finish();
    void finishWith(QJsonObject report);

    QString m_interfaceName;
    QPointer<tunnel::Channel> m_channel;
    Options m_options;
    std::unique_ptr<device::l2::PacketSocket> m_socket;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QTimer m_deadline;
    QJsonArray m_frames;
    int m_framesSeen = 0;
    bool m_done = false;
};

} // namespace cloop::forward
