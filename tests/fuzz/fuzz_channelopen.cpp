// libFuzzer target: channel openings (the JSON object of an open frame,
// common/protocol/channelopen.h), as a peer sends them.
//
// Invariants: an opening that parses serialises to metadata that parses
// again to the same value and kind, and serialising that gives the same
// object; a receiver of one kind never takes an opening of another.

#include <cstddef>
#include <cstdint>

#include <QJsonDocument>
#include <QJsonObject>

#include "common/protocol/channelopen.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
namespace protocol = cloop::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Open frames carry at most 4 KiB of metadata.
    if (size > 4096)
        return 0;
    const QJsonDocument document = QJsonDocument::fromJson(
        QByteArray(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size)));
    if (!document.isObject())
        return 0;
    const QJsonObject metadata = document.object();
    const auto first = protocol::parseChannelOpen(metadata);
    const bool runLog = protocol::RunLogOpen::fromMetadata(metadata).ok();
    const bool agentDevice = protocol::AgentDeviceOpen::fromMetadata(metadata).ok();
    check(!runLog || (first && std::holds_alternative<protocol::RunLogOpen>(*first)),
        "a run-log receiver takes only what parses as a run-log opening");
    check(!agentDevice || (first && std::holds_alternative<protocol::AgentDeviceOpen>(*first)),
        "an agent takes only what parses as a device opening");
    if (!first)
        return 0;

    const QJsonObject serialized = protocol::serializeChannelOpen(*first);
    check(serialized.value(QLatin1String("kind")).toString() == protocol::channelOpenKind(*first),
        "the serialised opening names its kind");
    const auto second = protocol::parseChannelOpen(serialized);
    check(second.ok(), "a serialised opening parses again");
    check(*first == *second, "the reparsed opening is the same value");
    check(protocol::serializeChannelOpen(*second) == serialized,
        "serialise(parse(serialise(o))) == serialise(o)");
    return 0;
}
