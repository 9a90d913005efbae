// libFuzzer target: what the hub does with the first message on a daemon
// endpoint or the event stream (hub/edge/greeting), before anyone is
// authenticated.
//
// Input: the first byte chooses the endpoint (bits 0-1: forwarders,
// executors, events) and the frame kind (bit 2: binary); the rest is the
// message.
//
// Invariants: binary data is never a greeting; a greeting accepted on a
// daemon endpoint is a hello or redeem of that endpoint's role at a
// protocol the hub speaks, and survives a serialise/parse round trip
// unchanged; a refusal always has a code and a message and is permanent;
// a subscription accepted names a token and came from a JSON object of
// type "subscribe".

#include <cstddef>
#include <cstdint>

#include "common/protocol/protocolversion.h"
#include "fuzzcheck.h"
#include "hub/edge/greeting.h"

#include <QJsonDocument>
#include <QJsonObject>

using cloop::fuzz::check;
namespace edge = cloop::hub::edge;
namespace protocol = cloop::protocol;

namespace {

template <typename Message> void checkAccepted(const Message &message, protocol::PeerRole endpoint)
{
    check(message.role == endpoint, "a greeting is of the endpoint's role");
    check(message.protocol >= protocol::kMinimumSupported,
        "a greeting speaks a protocol the hub takes");
    const QByteArray serialized = protocol::serializeControlMessage(message);
    const auto again = protocol::parseControlMessage(serialized);
    check(again.ok(), "an accepted greeting serialises to a message that parses");
    check(std::holds_alternative<Message>(*again), "and parses to the same kind of message");
    check(protocol::serializeControlMessage(*again) == serialized, "and serialises the same again");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t selector = data[0];
    const edge::FirstMessage message { (selector & 0x04) != 0,
        QByteArray(reinterpret_cast<const char *>(data + 1), static_cast<qsizetype>(size - 1)) };
    const int endpoint = selector & 0x03;

    if (endpoint == 2 || endpoint == 3) {
        const auto token = edge::parseSubscription(message);
        if (token) {
            check(!message.binary, "binary data never subscribes");
            const QJsonObject object = QJsonDocument::fromJson(message.payload).object();
            check(object.value(QLatin1String("type")).toString() == QLatin1String("subscribe"),
                "a subscription is a subscribe message");
            check(object.value(QLatin1String("token")).toString() == *token,
                "the token is the message's");
        } else {
            check(!token.error().code.isEmpty() && !token.error().message.isEmpty(),
                "a refusal says why");
        }
        return 0;
    }

    const auto role = endpoint == 0 ? protocol::PeerRole::Forwarder : protocol::PeerRole::Executor;
    const auto greeting = edge::parseDaemonGreeting(message, role);
    if (!greeting) {
        check(!greeting.error().code.isEmpty() && !greeting.error().message.isEmpty(),
            "a refusal says why");
        check(greeting.error().permanent, "a refused greeting ends the connection for good");
        return 0;
    }
    check(!message.binary, "binary data is never a greeting");
    if (const auto *hello = std::get_if<protocol::Hello>(&*greeting))
        checkAccepted(*hello, role);
    else
        checkAccepted(std::get<protocol::Redeem>(*greeting), role);
    return 0;
}
