#include "common/device/usb/usbipurbcounter.h"

#include "common/device/usb/usbipprotocol.h"

#include <algorithm>

namespace cloop::device::usb::usbip {

void UrbCounter::feed(Way &way, QByteArrayView bytes, bool fromRun)
{
    while (!m_lost && !bytes.isEmpty()) {
        if (way.skip > 0) {
            const qsizetype passed = qsizetype(std::min<qint64>(way.skip, bytes.size()));
            way.skip -= passed;
            bytes = bytes.sliced(passed);
            continue;
        }
        const qsizetype wanted = std::min(kUrbHeaderSize - way.header.size(), bytes.size());
        way.header.append(bytes.first(wanted));
        bytes = bytes.sliced(wanted);
        if (way.header.size() == kUrbHeaderSize && !takeHeader(way, fromRun))
            m_lost = true;
    }
}

bool UrbCounter::takeHeader(Way &way, bool fromRun)
{
    const auto header = decodeUrbHeader(way.header);
    way.header.clear();
    if (!header)
        return false;
    quint32 direction = header->direction;
    switch (header->command) {
    case UrbCommand::CmdSubmit:
        if (!fromRun)
            return false;
        // More unanswered than any kernel keeps in flight: counting stops
        // rather than memory growing.
        if (m_directionOf.size() >= kPendingKept)
            return false;
        // A kernel never reuses the number of a submission still pending.
        if (!m_directionOf.emplace(header->sequence, header->direction).second)
            return false;
        ++way.urbs;
        break;
    case UrbCommand::RetSubmit: {
        if (fromRun)
            return false;
        const auto submitted = m_directionOf.find(header->sequence);
        // An answer to a submission not seen (or forgotten): its payload
        // cannot be told apart from the next header.
        if (submitted == m_directionOf.end())
            return false;
        direction = submitted->second;
        m_directionOf.erase(submitted);
        ++way.urbs;
        break;
    }
    case UrbCommand::CmdUnlink:
        if (!fromRun)
            return false;
        break;
    case UrbCommand::RetUnlink:
        if (fromRun)
            return false;
        break;
    }
    const qsizetype payload = payloadSize(*header, direction);
    if (payload < 0)
        return false;
    way.skip = payload;
    return true;
}

} // namespace cloop::device::usb::usbip
