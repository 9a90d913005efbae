#pragma once

#include "common/protocol/devicespec.h"
#include "common/result.h"

#include <QJsonObject>
#include <QString>

#include <array>
#include <optional>
#include <variant>

namespace cloop::protocol {

// What a channel is opened for travels in its open frame as a JSON object
// with a "kind" (docs/protocol.md). This file is the one place that parses
// and writes those objects; the daemons and the hub only see the values
// below.

namespace channelkind {
inline constexpr QLatin1StringView kRunLog { "run-log" };
inline constexpr QLatin1StringView kSegment { "segment" };
inline constexpr QLatin1StringView kUsb { "usb" };
inline constexpr QLatin1StringView kDeviceTest { "device-test" };
inline constexpr QLatin1StringView kDevice { "device" };
inline constexpr std::array kAll { kRunLog, kSegment, kUsb, kDeviceTest, kDevice };
} // namespace channelkind

// What a hub may say a channel to a forwarder is about. A forwarder carries
// one device and refuses a channel that names any other (see
// daemon-forward/enrolleddevice.h); naming nothing means the carried one.
struct ChannelNames
{
    std::optional<QString> interfaceName; // "interface"
    std::optional<QString> busId; // "busid"
    std::optional<DeviceSpec> device; // "device"

    static Result<ChannelNames> fromMetadata(const QJsonObject &metadata);
    void writeTo(QJsonObject &metadata) const;

    friend bool operator==(const ChannelNames &, const ChannelNames &) = default;
};

// Agent -> hub: the output of one run, as log records (one channel per run
// and connection).
struct RunLogOpen
{
    qint64 runId = 0;

    static Result<RunLogOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const RunLogOpen &, const RunLogOpen &) = default;
};

// A device's bytes on a connection of their own: the daemon dials `url`
// with its own credential and this one-time ticket, and the device's
// stream arrives on that connection. The channel the opening came on stays
// the stream's handle: closing either ends both.
//
// In a hub cluster (protocol 30 on), the member holding the forwarder's
// tunnel waits there for an agent connected to another member: one hub on
// the path, not two. Without a URL (protocol 32 on, to agents and
// forwarders alike) it is the hub the tunnel reaches, which relays the
// stream between the two legs on a thread of its own, away from its API
// and database work.
struct DirectLeg
{
    QString url; // the holder's daemon URL, as the cluster announces it; empty: this hub
    QString ticket; // 43 characters of base64url: 256 random bits

    friend bool operator==(const DirectLeg &, const DirectLeg &) = default;
};

// Where on the hub an agent, and a forwarder, dial their legs (never their
// sessions).
inline constexpr QLatin1StringView kDirectLegPath { "/api/executors/direct-leg" };
inline constexpr QLatin1StringView kForwarderLegPath { "/api/forwarders/direct-leg" };

// Hub -> forwarder: the segment's frames for one run's binding.
struct SegmentOpen
{
    qint64 runId = 0;
    qint64 bindingId = 0;
    ChannelNames names;
    // Set ("leg"): the frames come on a connection of the forwarder's own.
    std::optional<DirectLeg> leg;

    static Result<SegmentOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const SegmentOpen &, const SegmentOpen &) = default;
};

// Hub -> forwarder: a USB/IP connection, for one run's binding or for the
// Test button (a device list, never an import).
struct UsbOpen
{
    enum class Purpose
    {
        Run,
        Test
    };

    Purpose purpose = Purpose::Run;
    qint64 runId = 0; // a run's only
    qint64 bindingId = 0; // a run's only
    ChannelNames names;
    // A run's only ("leg"): the bytes come on a connection of the forwarder's own.
    std::optional<DirectLeg> leg;

    static Result<UsbOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const UsbOpen &, const UsbOpen &) = default;
};

// Hub -> forwarder: the Test button for a segment, whose report comes back
// as one JSON object.
struct DeviceTestOpen
{
    ChannelNames names;

    static Result<DeviceTestOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const DeviceTestOpen &, const DeviceTestOpen &) = default;
};

// How an agent refuses a device channel whose direct leg it could not
// open; the hub then carries the stream itself.
inline constexpr QLatin1StringView kDirectLegUnreachable { "direct leg unreachable: " };

bool isValidStreamTicket(const QString &ticket);

// Hub -> agent, just before a run's start: the agent's end of the stream of
// one forwarded device, which the run's start names by binding.
struct AgentDeviceOpen
{
    qint64 runId = 0;
    qint64 bindingId = 0;
    QString name; // "fwd-lab", as in the start's devices
    DeviceSpec::Kind deviceKind = DeviceSpec::Kind::Segment;
    QString busId; // USB: the forwarder's bus id, which the agent imports
    // Set: the bytes come on a connection of the agent's own to the holder.
    std::optional<DirectLeg> direct;

    static Result<AgentDeviceOpen> fromMetadata(const QJsonObject &metadata);
    QJsonObject toMetadata() const;

    friend bool operator==(const AgentDeviceOpen &, const AgentDeviceOpen &) = default;
};

using ChannelOpen = std::variant<RunLogOpen, SegmentOpen, UsbOpen, DeviceTestOpen, AgentDeviceOpen>;

// Any of the kinds above, chosen by "kind"; an unknown kind is refused.
Result<ChannelOpen> parseChannelOpen(const QJsonObject &metadata);
QJsonObject serializeChannelOpen(const ChannelOpen &open);
QLatin1StringView channelOpenKind(const ChannelOpen &open);
// The "kind" a peer gave, for a log line about a channel that was refused:
// at most 40 characters, empty when there is none.
QString claimedChannelKind(const QJsonObject &metadata);

} // namespace cloop::protocol
