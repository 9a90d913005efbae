// libFuzzer target: control message parsing (JSON text frames).
//
// Invariants: a message that parses serialises to something that parses
// again, to the same message type, and serialising that second value gives
// the same bytes (serialisation is stable once a message has been through
// the parser once).

#include <cstddef>
#include <cstdint>

#include "common/protocol/controlmessage.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
namespace protocol = cloop::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(data, static_cast<qsizetype>(size));
    const auto first = protocol::parseControlMessage(input);
    if (!first)
        return 0;

    const QByteArray serialized = protocol::serializeControlMessage(*first);
    const auto second = protocol::parseControlMessage(serialized);
    check(second.ok(), "a serialised control message parses again");
    check(first->index() == second->index(), "the reparsed message has the same type");
    check(protocol::controlMessageType(*first) == protocol::controlMessageType(*second),
        "the reparsed message names the same type");
    check(protocol::serializeControlMessage(*second) == serialized,
        "serialise(parse(serialise(m))) == serialise(m)");
    return 0;
}
