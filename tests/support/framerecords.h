#pragma once

// Reading what a device channel carries, for the tests of both ends of a
// forwarded segment.

#include "common/protocol/framerecord.h"

#include <QPointer>

#include <functional>
#include <optional>

namespace cloop::tunnel {
class Channel;
}

namespace cloop::testing {

// Feeds what `channel` received into `decoder` until a record satisfies
// `match` (returned), the stream breaks, or `timeoutMs` pass (nothing).
// Records that do not match are consumed.
std::optional<protocol::FrameRecord> receiveFrameRecord(const QPointer<tunnel::Channel> &channel,
    protocol::FrameRecordDecoder &decoder,
    const std::function<bool(const protocol::FrameRecord &)> &match, int timeoutMs);

} // namespace cloop::testing
