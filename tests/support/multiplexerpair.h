#pragma once

#include "common/tunnel/channelmultiplexer.h"

#include <QObject>

namespace cloop::testing {

// A hub's and a daemon's multiplexer back to back, as a tunnel joins them:
// each frame arrives on a later turn of the event loop, never inside the
// call that sent it.
class MultiplexerPair final : public QObject
{
public:
    MultiplexerPair()
    {
        connect(
            &hub, &tunnel::ChannelMultiplexer::frameReady, this, [this](const QByteArray &frame) {
                QMetaObject::invokeMethod(
                    this, [this, frame] { (void)daemon.handleFrame(frame); }, Qt::QueuedConnection);
            });
        connect(&daemon, &tunnel::ChannelMultiplexer::frameReady, this,
            [this](const QByteArray &frame) {
                QMetaObject::invokeMethod(
                    this, [this, frame] { (void)hub.handleFrame(frame); }, Qt::QueuedConnection);
            });
    }

    tunnel::ChannelMultiplexer hub { tunnel::ChannelMultiplexer::Side::Hub };
    tunnel::ChannelMultiplexer daemon { tunnel::ChannelMultiplexer::Side::Daemon };
};

} // namespace cloop::testing
