#include "common/protocol/controlmessage.h"

#include "common/net/huburls.h"
#include "common/net/spkipin.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/protocol/agentcapabilities.h"
#include "common/protocol/channelopen.h"
#include "common/protocol/fieldreader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>

namespace cloop::protocol {

namespace {

PeerRole readRole(FieldReader &read)
{
    const QString name = read.string(QLatin1StringView("role"), 32);
    if (name == QLatin1String("forwarder"))
        return PeerRole::Forwarder;
    if (name == QLatin1String("executor"))
        return PeerRole::Executor;
    if (!read.error())
        read.fail(QStringLiteral("\"role\" must be \"forwarder\" or \"executor\""));
    return PeerRole::Forwarder;
}

template <typename T> Result<ControlMessage> finish(const FieldReader &reader, T message)
{
    if (reader.error())
        return *reader.error();
    return ControlMessage { std::move(message) };
}

constexpr qint64 kMaxProtocol = 10000;

// An update channel's name, absent from daemons before protocol 27.
QString readChannel(FieldReader &read)
{
    const QString channel = read.string(QLatin1StringView("channel"), 16, false);
    if (!channel.isEmpty() && channel != QLatin1String("stable")
        && channel != QLatin1String("edge"))
        read.fail(QStringLiteral("\"channel\" must be \"stable\" or \"edge\""));
    return channel;
}

constexpr std::pair<UpgradeStatus::State, QLatin1StringView> kUpgradeStates[] = {
    { UpgradeStatus::State::Refused, QLatin1StringView("refused") },
    { UpgradeStatus::State::Draining, QLatin1StringView("draining") },
    { UpgradeStatus::State::Requested, QLatin1StringView("requested") },
    { UpgradeStatus::State::Upgraded, QLatin1StringView("upgraded") },
    { UpgradeStatus::State::RolledBack, QLatin1StringView("rolled_back") },
    { UpgradeStatus::State::Failed, QLatin1StringView("failed") },
};
constexpr qint64 kMaxId = kMaxWireId;

Result<ControlMessage> parseHello(FieldReader &read)
{
    Hello hello;
    hello.protocol = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
    hello.software = read.string(QLatin1StringView("software"), 64);
    hello.role = readRole(read);
    hello.credential = read.string(QLatin1StringView("credential"), 256);
    hello.capabilities = read.optionalObject(QLatin1StringView("capabilities"));
    hello.channel = readChannel(read);
    if (read.has(QLatin1StringView("stream_ticket"))) {
        hello.streamTicket = read.string(QLatin1StringView("stream_ticket"), 64);
        if (!read.error() && !isValidStreamTicket(hello.streamTicket))
            read.fail(QStringLiteral("\"stream_ticket\" is not a stream ticket"));
    }
    return finish(read, std::move(hello));
}

Result<ControlMessage> parseRedeem(FieldReader &read)
{
    Redeem redeem;
    redeem.protocol
        = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
    redeem.software = read.string(QLatin1StringView("software"), 64);
    redeem.role = readRole(read);
    redeem.token = read.string(QLatin1StringView("token"), 256);
    redeem.capabilities = read.optionalObject(QLatin1StringView("capabilities"));
    redeem.channel = readChannel(read);
    return finish(read, std::move(redeem));
}

Result<ControlMessage> parseEnrolled(FieldReader &read)
{
    Enrolled enrolled;
    enrolled.id = read.integer(QLatin1StringView("id"), 1, kMaxId);
    enrolled.name = read.string(QLatin1StringView("name"), 64);
    enrolled.credential = read.string(QLatin1StringView("credential"), 256);
    return finish(read, std::move(enrolled));
}

// "pins": a list of at most kMaxHubPins SPKI pins, each one PinSet reads.
QStringList readPins(FieldReader &read)
{
    const QJsonValue value = read.object().value(QLatin1String("pins"));
    QStringList pins;
    if (!value.isArray() || value.toArray().size() > kMaxHubPins) {
        read.fail(QStringLiteral("\"pins\" must be a list of at most %1 pins").arg(kMaxHubPins));
        return {};
    }
    for (const QJsonValue &entry : value.toArray()) {
        const QString pin = entry.toString();
        const auto parsed = net::PinSet::parse(pin);
        if (!entry.isString() || pin.size() > 128 || pin.contains(QLatin1Char(',')) || !parsed
            || parsed->isEmpty()) {
            read.fail(QStringLiteral("\"pins\" entries must each be one pin (sha256:…)"));
            return {};
        }
        pins.append(pin);
    }
    return pins;
}

// "hubs": 1 to kMaxHubMembers daemon URLs of the hub's cluster. A hub never
// asks for plaintext to another host, whatever the daemon's operator allows.
QList<QUrl> readHubs(FieldReader &read)
{
    auto hubs = net::parseHubUrlList(
        read.object().value(QLatin1String("hubs")), net::PlaintextHubUrls::LoopbackOnly);
    if (!hubs) {
        read.fail(QStringLiteral("\"hubs\": %1").arg(hubs.error().message));
        return {};
    }
    return *hubs;
}

Result<ControlMessage> parseWelcome(FieldReader &read)
{
    Welcome welcome;
    welcome.protocol
        = static_cast<int>(read.integer(QLatin1StringView("protocol"), 1, kMaxProtocol));
    welcome.software = read.string(QLatin1StringView("software"), 64);
    welcome.id = read.integer(QLatin1StringView("id"), 1, kMaxId);
    welcome.name = read.string(QLatin1StringView("name"), 64);
    const QJsonValue device = read.object().value(QLatin1String("device"));
    if (device.isObject()) {
        auto spec = DeviceSpec::fromJson(device.toObject());
        if (!spec)
            read.fail(spec.error().message);
        else
            welcome.device = *spec;
    } else if (!device.isUndefined() && !device.isNull()) {
        read.fail(QStringLiteral("\"device\" must be an object"));
    }
    if (read.has(QLatin1StringView("pins")))
        welcome.pins = readPins(read);
    if (read.has(QLatin1StringView("hubs")))
        welcome.hubs = readHubs(read);
    return finish(read, std::move(welcome));
}

Result<ControlMessage> parseHubPins(FieldReader &read)
{
    HubPins announced;
    announced.pins = readPins(read);
    if (announced.pins.isEmpty())
        read.fail(QStringLiteral("\"pins\" names no key"));
    return finish(read, std::move(announced));
}

Result<ControlMessage> parseHubMembers(FieldReader &read)
{
    HubMembers members;
    members.hubs = readHubs(read);
    return finish(read, std::move(members));
}

Result<ControlMessage> parseErrorMessage(FieldReader &read)
{
    ErrorMessage error;
    error.code = read.string(QLatin1StringView("code"), 64);
    error.message = read.string(QLatin1StringView("message"), 4096);
    error.permanent = read.boolean(QLatin1StringView("permanent"));
    // Absent from hubs before protocol 34.
    if (read.has(QLatin1StringView("retry_within_ms")))
        error.retryWithinMs
            = read.integer(QLatin1StringView("retry_within_ms"), 0, kMaxRetryWithinMs);
    if (error.permanent && error.retryWithinMs > 0)
        read.fail(
            QStringLiteral("a permanent error is not retried: it has no \"retry_within_ms\""));
    return finish(read, std::move(error));
}

void readArgv(FieldReader &read, RunStart &start)
{
    const QJsonValue argv = read.object().value(QLatin1String("argv"));
    // A harness install runs the agent's own command, never one of the hub's.
    if (!start.harness.isEmpty()) {
        if (!argv.isUndefined() && !(argv.isArray() && argv.toArray().isEmpty()))
            read.fail(QStringLiteral("a harness install carries no \"argv\""));
        return;
    }
    if (!argv.isArray() || argv.toArray().isEmpty() || argv.toArray().size() > kMaxArgv) {
        read.fail(QStringLiteral("\"argv\" must be an array of 1..%1 strings").arg(kMaxArgv));
        return;
    }
    for (const QJsonValue &arg : argv.toArray()) {
        if (!arg.isString() || arg.toString().size() > kMaxArgLength
            || arg.toString().contains(QChar(u'\0'))) {
            read.fail(QStringLiteral(
                "\"argv\" entries must be strings of at most %1 characters without NUL")
                          .arg(kMaxArgLength));
            return;
        }
        start.argv.append(arg.toString());
    }
}

void readEnv(FieldReader &read, RunStart &start)
{
    static const QRegularExpression envName(QStringLiteral("\\A[A-Za-z_][A-Za-z0-9_]{0,127}\\z"));
    const QJsonValue env = read.object().value(QLatin1String("env"));
    if (env.isUndefined() || env.isNull())
        return;
    if (!env.isObject() || env.toObject().size() > kMaxEnv) {
        read.fail(QStringLiteral("\"env\" must be an object of at most %1 entries").arg(kMaxEnv));
        return;
    }
    const QJsonObject entries = env.toObject();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        if (!envName.match(it.key()).hasMatch() || !it.value().isString()
            || it.value().toString().size() > kMaxArgLength
            || it.value().toString().contains(QChar(u'\n'))
            || it.value().toString().contains(QChar(u'\0'))) {
            read.fail(QStringLiteral("\"env\" entry \"%1\" is not NAME: single-line text")
                          .arg(it.key().left(64)));
            return;
        }
        start.env.insert(it.key(), it.value().toString());
    }
}

Result<ForwardedDevice> readForwardedDevice(const QJsonObject &fields)
{
    static const QRegularExpression interfaceName(QStringLiteral("\\A[A-Za-z0-9_.-]{1,15}\\z"));
    FieldReader device(fields, QStringLiteral("run.start device message"));
    ForwardedDevice forwarded;
    forwarded.bindingId = device.integer(QLatin1StringView("binding_id"), 1, kMaxId);
    forwarded.name = device.string(QLatin1StringView("name"), 64);
    const auto kind = parseDeviceKind(device.string(QLatin1StringView("kind"), 8));
    if (kind)
        forwarded.kind = *kind;
    if (kind == DeviceSpec::Kind::Segment) {
        forwarded.target = device.string(QLatin1StringView("target"), 15);
        forwarded.address = device.string(QLatin1StringView("address"), 64, false);
        if (fields.contains(QLatin1String("mtu")))
            forwarded.mtu = static_cast<int>(
                device.integer(QLatin1StringView("mtu"), kMinMtu, kMaxSandboxMtu));
        if (!device.error() && !interfaceName.match(forwarded.target).hasMatch())
            device.fail(QStringLiteral("\"target\" is not an interface name"));
    } else if (kind == DeviceSpec::Kind::Usb) {
        forwarded.busId = device.string(QLatin1StringView("busid"), 31);
        if (!device.error() && !device::usb::usbip::isValidBusId(forwarded.busId.toLatin1()))
            device.fail(QStringLiteral("\"busid\" is not a USB bus id"));
    } else if (!device.error()) {
        device.fail(QStringLiteral("\"kind\" must be \"l2\" or \"usb\""));
    }
    if (!device.error() && !isValidForwardedDeviceName(forwarded.name))
        device.fail(QStringLiteral("\"name\" is not a device name"));
    if (device.error())
        return *device.error();
    return forwarded;
}

void readDevices(FieldReader &read, RunStart &start)
{
    const QJsonValue devices = read.object().value(QLatin1String("devices"));
    if (devices.isUndefined() || devices.isNull())
        return;
    if (!devices.isArray() || devices.toArray().size() > kMaxDevices) {
        read.fail(
            QStringLiteral("\"devices\" must be an array of at most %1 devices").arg(kMaxDevices));
        return;
    }
    for (const QJsonValue &entry : devices.toArray()) {
        if (!entry.isObject()) {
            read.fail(QStringLiteral("\"devices\" entries must be objects"));
            return;
        }
        Result<ForwardedDevice> forwarded = readForwardedDevice(entry.toObject());
        if (!forwarded) {
            read.fail(forwarded.error().message);
            return;
        }
        start.devices.append(*forwarded);
    }
}

// Structure only; what a path or a command means is the agent's to check
// (WorkRoot confines the workdir, the sandbox runs argv).
Result<ControlMessage> parseRunStart(FieldReader &read)
{
    RunStart start;
    start.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    start.image = read.string(QLatin1StringView("image"), 256, false);
    start.workdir = read.string(QLatin1StringView("workdir"), 1024);
    start.runtime = read.string(QLatin1StringView("runtime"), 64, false);
    start.hostProcess = read.boolean(QLatin1StringView("host_process"));
    if (read.has(QLatin1StringView("resume_offset")))
        start.resumeOffset = read.integer(QLatin1StringView("resume_offset"), 0, kMaxId);
    if (read.has(QLatin1StringView("harness"))) {
        start.harness = read.string(QLatin1StringView("harness"), 64);
        if (!start.harness.isEmpty() && !AgentCapabilities::isHarnessName(start.harness))
            read.fail(QStringLiteral("\"harness\" is not a harness name"));
    }
    readArgv(read, start);
    readEnv(read, start);
    readDevices(read, start);
    return finish(read, std::move(start));
}

Result<ControlMessage> parseRunCancel(FieldReader &read)
{
    RunCancel cancel;
    cancel.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    cancel.reason = read.string(QLatin1StringView("reason"), 1024, false);
    return finish(read, std::move(cancel));
}

Result<ControlMessage> parseDeviceReleased(FieldReader &read)
{
    DeviceReleased released;
    released.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    released.bindingId = read.integer(QLatin1StringView("binding_id"), 1, kMaxId);
    released.reason = read.string(QLatin1StringView("reason"), 1024, false);
    return finish(read, std::move(released));
}

} // namespace

QLatin1StringView counterUnitName(DeviceCounters::Unit unit)
{
    return unit == DeviceCounters::Unit::Urbs ? QLatin1StringView("urbs")
                                              : QLatin1StringView("frames");
}

namespace {

Result<ControlMessage> parseDeviceCounters(FieldReader &read)
{
    // JSON numbers are exact up to 2^53: a count past it is no count.
    constexpr qint64 kMaxCount = qint64(1) << 53;
    DeviceCounters counters;
    counters.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    counters.bindingId = read.integer(QLatin1StringView("binding_id"), 1, kMaxId);
    counters.framesToRun = read.integer(QLatin1StringView("frames_to_run"), 0, kMaxCount);
    counters.framesFromRun = read.integer(QLatin1StringView("frames_from_run"), 0, kMaxCount);
    counters.droppedToRun = read.integer(QLatin1StringView("dropped_to_run"), 0, kMaxCount);
    counters.droppedFromRun = read.integer(QLatin1StringView("dropped_from_run"), 0, kMaxCount);
    // Frames unless said otherwise.
    if (read.has(QLatin1StringView("unit"))) {
        const QString unit = read.string(QLatin1StringView("unit"), 16);
        if (unit == counterUnitName(DeviceCounters::Unit::Urbs))
            counters.unit = DeviceCounters::Unit::Urbs;
        else if (unit != counterUnitName(DeviceCounters::Unit::Frames) && !read.error())
            read.fail(QStringLiteral("\"unit\" is neither frames nor urbs"));
    }
    return finish(read, counters);
}

Result<ControlMessage> parseRunAck(FieldReader &read)
{
    RunAck ack;
    ack.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    ack.offset = read.integer(QLatin1StringView("offset"), 0, kMaxId);
    return finish(read, std::move(ack));
}

Result<ControlMessage> parseRunStarted(FieldReader &read)
{
    RunStarted started;
    started.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    return finish(read, std::move(started));
}

Result<ControlMessage> parseRunFinished(FieldReader &read)
{
    RunFinished finished;
    finished.runId = read.integer(QLatin1StringView("run_id"), 1, kMaxId);
    if (const QJsonValue code = read.object().value(QLatin1String("exit_code"));
        !code.isUndefined() && !code.isNull())
        finished.exitCode
            = static_cast<int>(read.integer(QLatin1StringView("exit_code"), -255, 255));
    finished.error = read.string(QLatin1StringView("error"), 4096, false);
    finished.endOffset = read.integer(QLatin1StringView("end_offset"), 0, kMaxId);
    if (!finished.exitCode && finished.error.isEmpty())
        read.fail(QStringLiteral("a finished run needs an exit code or an error"));
    return finish(read, std::move(finished));
}

Result<ControlMessage> parseRunsHeld(FieldReader &read)
{
    RunsHeld held;
    const QJsonValue ids = read.object().value(QLatin1String("run_ids"));
    if (!ids.isArray() || ids.toArray().size() > kMaxRunsHeld) {
        read.fail(
            QStringLiteral("\"run_ids\" must be an array of at most %1 run ids").arg(kMaxRunsHeld));
        return finish(read, std::move(held));
    }
    for (const QJsonValue &id : ids.toArray()) {
        const double number = id.toDouble(-1);
        if (!id.isDouble() || number < 1 || number > double(kMaxId)
            || number != std::floor(number)) {
            read.fail(QStringLiteral("\"run_ids\" entries must be run ids (whole numbers from 1)"));
            break;
        }
        held.runIds.append(static_cast<qint64>(number));
    }
    if (!read.has(QLatin1StringView("kept_devices")))
        return finish(read, std::move(held));
    const QJsonValue kept = read.object().value(QLatin1String("kept_devices"));
    if (!kept.isArray() || kept.toArray().size() > kMaxRunsHeld * kMaxDevices) {
        read.fail(QStringLiteral("\"kept_devices\" must be an array of at most %1 devices")
                      .arg(kMaxRunsHeld * kMaxDevices));
        return finish(read, std::move(held));
    }
    for (const QJsonValue &entry : kept.toArray()) {
        const QJsonObject object = entry.toObject();
        FieldReader device(object, QStringLiteral("a kept device"));
        const qint64 runId = device.integer(QLatin1StringView("run_id"), 1, kMaxId);
        const qint64 bindingId = device.integer(QLatin1StringView("binding_id"), 1, kMaxId);
        if (!entry.isObject() || device.error()) {
            read.fail(
                QStringLiteral("\"kept_devices\" entries must name a run_id and a binding_id"));
            break;
        }
        held.keptDevices.append({ runId, bindingId });
    }
    return finish(read, std::move(held));
}

Result<ControlMessage> parseDeviceState(FieldReader &read)
{
    DeviceState state;
    state.mtu = static_cast<int>(read.integer(QLatin1StringView("mtu"), kMinMtu, kMaxReportedMtu));
    state.up = read.boolean(QLatin1StringView("up"));
    state.carrier = read.boolean(QLatin1StringView("carrier"));
    if (read.has(QLatin1StringView("usb_busid"))) {
        state.usb = true;
        state.usbBusId = read.string(QLatin1StringView("usb_busid"), 31, false);
    }
    return finish(read, state);
}

Result<ControlMessage> parseUpgradeRequest(FieldReader &read)
{
    UpgradeRequest request;
    request.target = read.string(QLatin1StringView("target"), 64);
    for (auto it = read.object().begin(); it != read.object().end(); ++it)
        if (it.key() != QLatin1String("type") && it.key() != QLatin1String("target"))
            request.ignoredFields.append(it.key().left(64));
    return finish(read, std::move(request));
}

Result<ControlMessage> parseUpgradeStatus(FieldReader &read)
{
    UpgradeStatus status;
    const QString state = read.string(QLatin1StringView("state"), 32);
    bool known = false;
    for (const auto &[value, name] : kUpgradeStates) {
        if (state == name) {
            status.state = value;
            known = true;
        }
    }
    if (!known && !read.error())
        read.fail(QStringLiteral("\"state\" is not an upgrade state"));
    status.target = read.string(QLatin1StringView("target"), 64, false);
    status.from = read.string(QLatin1StringView("from"), 64, false);
    status.to = read.string(QLatin1StringView("to"), 64, false);
    status.message = read.string(QLatin1StringView("message"), 1024, false);
    if (read.has(QLatin1StringView("draining")))
        status.draining = static_cast<int>(read.integer(QLatin1StringView("draining"), 0, 100000));
    if (status.state == UpgradeStatus::State::Refused && status.message.isEmpty() && !read.error())
        read.fail(QStringLiteral("a refusal must say why (\"message\")"));
    return finish(read, std::move(status));
}

Result<ControlMessage> parseCapabilitiesReport(FieldReader &read)
{
    CapabilitiesReport report;
    const QJsonValue capabilities = read.object().value(QLatin1String("capabilities"));
    if (!capabilities.isObject())
        read.fail(QStringLiteral("\"capabilities\" must be an object"));
    report.capabilities = capabilities.toObject();
    return finish(read, std::move(report));
}

struct MessageParser
{
    QLatin1StringView type;
    Result<ControlMessage> (*parse)(FieldReader &read);
};

constexpr MessageParser kMessageParsers[] = {
    { messagetype::kHello, parseHello },
    { messagetype::kRedeem, parseRedeem },
    { messagetype::kEnrolled, parseEnrolled },
    { messagetype::kWelcome, parseWelcome },
    { messagetype::kError, parseErrorMessage },
    { messagetype::kRunStart, parseRunStart },
    { messagetype::kRunCancel, parseRunCancel },
    { messagetype::kRunAck, parseRunAck },
    { messagetype::kRunStarted, parseRunStarted },
    { messagetype::kRunFinished, parseRunFinished },
    { messagetype::kRunsHeld, parseRunsHeld },
    { messagetype::kDeviceReleased, parseDeviceReleased },
    { messagetype::kHubPins, parseHubPins },
    { messagetype::kHubMembers, parseHubMembers },
    { messagetype::kDeviceState, parseDeviceState },
    { messagetype::kDeviceCounters, parseDeviceCounters },
    { messagetype::kUpgradeRequest, parseUpgradeRequest },
    { messagetype::kUpgradeStatus, parseUpgradeStatus },
    { messagetype::kCapabilities, parseCapabilitiesReport },
};

// The JSON object every control message is, before its type is read.
Result<QJsonObject> readEnvelope(QByteArrayView utf8)
{
    if (utf8.size() > kMaxControlMessageSize)
        return protocolError(QStringLiteral("control message of %1 bytes exceeds %2")
                                 .arg(utf8.size())
                                 .arg(kMaxControlMessageSize));
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(utf8.toByteArray(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return protocolError(QStringLiteral("control message is not JSON: %1 at offset %2")
                                 .arg(parseError.errorString())
                                 .arg(parseError.offset));
    if (!document.isObject())
        return protocolError(QStringLiteral("control message is not a JSON object"));
    return document.object();
}

} // namespace

bool isValidForwardedDeviceName(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("\\A[a-z0-9][a-z0-9._-]{0,63}\\z"));
    return pattern.match(name).hasMatch();
}

QString upgradeStateName(UpgradeStatus::State state)
{
    for (const auto &[value, name] : kUpgradeStates)
        if (value == state)
            return name;
    return {};
}

QString roleName(PeerRole role)
{
    return role == PeerRole::Forwarder ? QStringLiteral("forwarder") : QStringLiteral("executor");
}

Result<ControlMessage> parseControlMessage(QByteArrayView utf8)
{
    const Result<QJsonObject> object = readEnvelope(utf8);
    if (!object)
        return object.error();
    const QJsonValue typeValue = object->value(QLatin1String("type"));
    if (!typeValue.isString())
        return protocolError(QStringLiteral("control message has no \"type\""));
    const QString type = typeValue.toString();
    for (const MessageParser &parser : kMessageParsers) {
        if (type == parser.type) {
            FieldReader read(*object, type + QStringLiteral(" message"));
            return parser.parse(read);
        }
    }
    return protocolError(QStringLiteral("unknown control message type \"%1\"").arg(type.left(64)));
}

namespace {
struct Serializer
{
    QJsonObject operator()(const Hello &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kHello },
            { QStringLiteral("protocol"), m.protocol }, { QStringLiteral("software"), m.software },
            { QStringLiteral("role"), roleName(m.role) },
            { QStringLiteral("credential"), m.credential } };
        if (!m.capabilities.isEmpty())
            object.insert(QStringLiteral("capabilities"), m.capabilities);
        if (!m.channel.isEmpty())
            object.insert(QStringLiteral("channel"), m.channel);
        if (!m.streamTicket.isEmpty())
            object.insert(QStringLiteral("stream_ticket"), m.streamTicket);
        return object;
    }
    QJsonObject operator()(const Redeem &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kRedeem },
            { QStringLiteral("protocol"), m.protocol }, { QStringLiteral("software"), m.software },
            { QStringLiteral("role"), roleName(m.role) }, { QStringLiteral("token"), m.token } };
        if (!m.capabilities.isEmpty())
            object.insert(QStringLiteral("capabilities"), m.capabilities);
        if (!m.channel.isEmpty())
            object.insert(QStringLiteral("channel"), m.channel);
        return object;
    }
    QJsonObject operator()(const Enrolled &m) const
    {
        return { { QStringLiteral("type"), messagetype::kEnrolled }, { QStringLiteral("id"), m.id },
            { QStringLiteral("name"), m.name }, { QStringLiteral("credential"), m.credential } };
    }
    QJsonObject operator()(const Welcome &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kWelcome },
            { QStringLiteral("protocol"), m.protocol }, { QStringLiteral("software"), m.software },
            { QStringLiteral("id"), m.id }, { QStringLiteral("name"), m.name } };
        if (m.device)
            object.insert(QStringLiteral("device"), m.device->toJson());
        if (!m.pins.isEmpty())
            object.insert(QStringLiteral("pins"), QJsonArray::fromStringList(m.pins));
        if (!m.hubs.isEmpty())
            object.insert(QStringLiteral("hubs"), net::hubUrlListJson(m.hubs));
        return object;
    }
    QJsonObject operator()(const HubPins &m) const
    {
        return { { QStringLiteral("type"), messagetype::kHubPins },
            { QStringLiteral("pins"), QJsonArray::fromStringList(m.pins) } };
    }
    QJsonObject operator()(const HubMembers &m) const
    {
        return { { QStringLiteral("type"), messagetype::kHubMembers },
            { QStringLiteral("hubs"), net::hubUrlListJson(m.hubs) } };
    }
    QJsonObject operator()(const RunStart &m) const
    {
        QJsonObject env;
        for (auto it = m.env.begin(); it != m.env.end(); ++it)
            env.insert(it.key(), it.value());
        QJsonObject object { { QStringLiteral("type"), messagetype::kRunStart },
            { QStringLiteral("run_id"), m.runId },
            { QStringLiteral("argv"), QJsonArray::fromStringList(m.argv) },
            { QStringLiteral("workdir"), m.workdir },
            { QStringLiteral("host_process"), m.hostProcess },
            { QStringLiteral("resume_offset"), m.resumeOffset } };
        if (!m.image.isEmpty())
            object.insert(QStringLiteral("image"), m.image);
        if (!m.runtime.isEmpty())
            object.insert(QStringLiteral("runtime"), m.runtime);
        if (!env.isEmpty())
            object.insert(QStringLiteral("env"), env);
        if (!m.harness.isEmpty())
            object.insert(QStringLiteral("harness"), m.harness);
        if (!m.devices.isEmpty()) {
            QJsonArray devices;
            for (const ForwardedDevice &device : m.devices) {
                QJsonObject entry { { QStringLiteral("binding_id"), device.bindingId },
                    { QStringLiteral("name"), device.name },
                    { QStringLiteral("kind"), deviceKindName(device.kind) } };
                if (device.kind == DeviceSpec::Kind::Segment) {
                    entry.insert(QStringLiteral("target"), device.target);
                    entry.insert(QStringLiteral("mtu"), device.mtu);
                    if (!device.address.isEmpty())
                        entry.insert(QStringLiteral("address"), device.address);
                } else {
                    entry.insert(QStringLiteral("busid"), device.busId);
                }
                devices.append(entry);
            }
            object.insert(QStringLiteral("devices"), devices);
        }
        return object;
    }
    QJsonObject operator()(const RunCancel &m) const
    {
        return { { QStringLiteral("type"), messagetype::kRunCancel },
            { QStringLiteral("run_id"), m.runId }, { QStringLiteral("reason"), m.reason } };
    }
    QJsonObject operator()(const DeviceReleased &m) const
    {
        return { { QStringLiteral("type"), messagetype::kDeviceReleased },
            { QStringLiteral("run_id"), m.runId }, { QStringLiteral("binding_id"), m.bindingId },
            { QStringLiteral("reason"), m.reason } };
    }
    QJsonObject operator()(const DeviceCounters &m) const
    {
        return { { QStringLiteral("type"), messagetype::kDeviceCounters },
            { QStringLiteral("run_id"), m.runId }, { QStringLiteral("binding_id"), m.bindingId },
            { QStringLiteral("frames_to_run"), m.framesToRun },
            { QStringLiteral("frames_from_run"), m.framesFromRun },
            { QStringLiteral("dropped_to_run"), m.droppedToRun },
            { QStringLiteral("dropped_from_run"), m.droppedFromRun },
            { QStringLiteral("unit"), counterUnitName(m.unit) } };
    }
    QJsonObject operator()(const RunAck &m) const
    {
        return { { QStringLiteral("type"), messagetype::kRunAck },
            { QStringLiteral("run_id"), m.runId }, { QStringLiteral("offset"), m.offset } };
    }
    QJsonObject operator()(const RunStarted &m) const
    {
        return { { QStringLiteral("type"), messagetype::kRunStarted },
            { QStringLiteral("run_id"), m.runId } };
    }
    QJsonObject operator()(const RunFinished &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kRunFinished },
            { QStringLiteral("run_id"), m.runId }, { QStringLiteral("end_offset"), m.endOffset } };
        if (m.exitCode)
            object.insert(QStringLiteral("exit_code"), *m.exitCode);
        if (!m.error.isEmpty())
            object.insert(QStringLiteral("error"), m.error);
        return object;
    }
    QJsonObject operator()(const DeviceState &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kDeviceState },
            { QStringLiteral("mtu"), m.mtu }, { QStringLiteral("up"), m.up },
            { QStringLiteral("carrier"), m.carrier } };
        if (m.usb)
            object.insert(QStringLiteral("usb_busid"), m.usbBusId);
        return object;
    }
    QJsonObject operator()(const RunsHeld &m) const
    {
        QJsonArray ids;
        for (const qint64 id : m.runIds)
            ids.append(id);
        QJsonObject object { { QStringLiteral("type"), messagetype::kRunsHeld },
            { QStringLiteral("run_ids"), ids } };
        if (!m.keptDevices.isEmpty()) {
            QJsonArray kept;
            for (const auto &[runId, bindingId] : m.keptDevices)
                kept.append(QJsonObject { { QStringLiteral("run_id"), runId },
                    { QStringLiteral("binding_id"), bindingId } });
            object.insert(QStringLiteral("kept_devices"), kept);
        }
        return object;
    }
    QJsonObject operator()(const UpgradeRequest &m) const
    {
        return { { QStringLiteral("type"), messagetype::kUpgradeRequest },
            { QStringLiteral("target"), m.target } };
    }
    QJsonObject operator()(const UpgradeStatus &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kUpgradeStatus },
            { QStringLiteral("state"), upgradeStateName(m.state) } };
        const std::pair<QString, QString> texts[]
            = { { QStringLiteral("target"), m.target }, { QStringLiteral("from"), m.from },
                  { QStringLiteral("to"), m.to }, { QStringLiteral("message"), m.message } };
        for (const auto &[key, value] : texts)
            if (!value.isEmpty())
                object.insert(key, value);
        if (m.state == UpgradeStatus::State::Draining)
            object.insert(QStringLiteral("draining"), m.draining);
        return object;
    }
    QJsonObject operator()(const CapabilitiesReport &m) const
    {
        return { { QStringLiteral("type"), messagetype::kCapabilities },
            { QStringLiteral("capabilities"), m.capabilities } };
    }
    QJsonObject operator()(const ErrorMessage &m) const
    {
        QJsonObject object { { QStringLiteral("type"), messagetype::kError },
            { QStringLiteral("code"), m.code }, { QStringLiteral("message"), m.message },
            { QStringLiteral("permanent"), m.permanent } };
        if (m.retryWithinMs > 0)
            object.insert(QStringLiteral("retry_within_ms"), m.retryWithinMs);
        return object;
    }
};
} // namespace

QByteArray serializeControlMessage(const ControlMessage &message)
{
    return QJsonDocument(std::visit(Serializer {}, message)).toJson(QJsonDocument::Compact);
}

QString controlMessageType(const ControlMessage &message)
{
    return std::visit(Serializer {}, message).value(QLatin1String("type")).toString();
}

} // namespace cloop::protocol
