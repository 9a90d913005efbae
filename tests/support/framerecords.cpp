#include "support/framerecords.h"

#include "common/tunnel/channelmultiplexer.h"
#include "support/processutil.h"

namespace cloop::testing {

std::optional<protocol::FrameRecord> receiveFrameRecord(const QPointer<tunnel::Channel> &channel,
    protocol::FrameRecordDecoder &decoder,
    const std::function<bool(const protocol::FrameRecord &)> &match, int timeoutMs)
{
    std::optional<protocol::FrameRecord> found;
    waitUntil(
        [&] {
            if (tunnel::Channel *live = channel.data(); live && live->bytesAvailable() > 0) {
                if (!decoder.feed(live->readAll()))
                    return true;
            }
            protocol::FrameRecord record;
            while (decoder.next(record)) {
                if (match(record)) {
                    found = record;
                    return true;
                }
            }
            return false;
        },
        timeoutMs);
    return found;
}

} // namespace cloop::testing
