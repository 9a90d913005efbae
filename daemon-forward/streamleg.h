#pragma once

#include "common/daemon/streamlegdial.h"
#include "common/protocol/channelopen.h"

namespace cloop::forward {

// A run's segment or USB opening with a "leg" (protocol 32) is a handle:
// the forwarder takes it at once and dials its hub at kForwarderLegPath,
// where the hub opens the stream itself, the same opening without the leg.

// The leg of a run's opening; none for anything else.
std::optional<protocol::DirectLeg> legOf(const protocol::ChannelOpen &open);

// Whether an opening that came on the leg of `handle` is its stream: the
// same kind, run and binding, and no leg of its own.
bool isStreamOf(const protocol::ChannelOpen &handle, const QJsonObject &metadata);

// The dial of `open`'s leg (it has one), not started, letting through only
// its stream; `device`, the one the forwarder carries, names the stream in
// log lines.
daemon::StreamLegDial *makeStreamLegDial(tunnel::Channel *handle, const protocol::ChannelOpen &open,
    const QString &device, const daemon::StreamLegDial::Dialer &dialer, QObject *parent);

} // namespace cloop::forward
