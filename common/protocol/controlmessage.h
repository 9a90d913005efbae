#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <variant>

namespace cloop::protocol {

// Control messages are JSON objects in WebSocket text frames, each with a
// "type". This file is the one place that parses and validates them; code
// above it only sees the typed values below.

namespace messagetype {
inline constexpr QLatin1StringView kHello{"hello"};
inline constexpr QLatin1StringView kRedeem{"redeem"};
inline constexpr QLatin1StringView kEnrolled{"enrolled"};
inline constexpr QLatin1StringView kWelcome{"welcome"};
inline constexpr QLatin1StringView kError{"error"};
} // namespace messagetype

// Which endpoint a daemon speaks to; a credential of one role never
// authenticates as the other.
enum class PeerRole { Forwarder, Executor };
QString roleName(PeerRole role);

// Daemon -> hub, first message of an enrolled daemon.
struct Hello
{
    int protocol = 0;
    QString software;
    PeerRole role = PeerRole::Forwarder;
    QString credential;
    // What an executor agent can do (its detected capabilities); empty for
    // forwarders. Validated by the hub, not here: it is the agent's report.
    QJsonObject capabilities;
};

// Daemon -> hub, first message of a daemon holding a one-time token.
struct Redeem
{
    int protocol = 0;
    QString software;
    PeerRole role = PeerRole::Forwarder;
    QString token;
    QJsonObject capabilities;
};

// Hub -> daemon, answer to Redeem: the long-lived credential, sent once.
struct Enrolled
{
    qint64 id = 0;
    QString name;
    QString credential;
};

// Hub -> daemon: authenticated; what the daemon is for.
struct Welcome
{
    int protocol = 0;
    QString software;
    qint64 id = 0;
    QString name;
    std::optional<DeviceSpec> device; // forwarders only
};

// Either direction. A permanent error means "do not retry": the daemon
// stops its reconnect loop and says why.
struct ErrorMessage
{
    QString code;
    QString message;
    bool permanent = false;
};

using ControlMessage = std::variant<Hello, Redeem, Enrolled, Welcome, ErrorMessage>;

inline constexpr qsizetype kMaxControlMessageSize = 64 * 1024;

Result<ControlMessage> parseControlMessage(QByteArrayView utf8);
QByteArray serializeControlMessage(const ControlMessage &message);
QString controlMessageType(const ControlMessage &message);

} // namespace cloop::protocol
