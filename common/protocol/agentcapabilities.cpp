#include "common/protocol/agentcapabilities.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStringList>

#include <cmath>

namespace cloop::protocol {

namespace {

using Caps = AgentCapabilities;

// JSON numbers are doubles: integers are exact up to 2^53.
constexpr qint64 kMaxJsonInteger = qint64(1) << 53;

namespace key {
inline constexpr QLatin1StringView kSoftware { "software" };
inline constexpr QLatin1StringView kProtocol { "protocol" };
inline constexpr QLatin1StringView kOs { "os" };
inline constexpr QLatin1StringView kArch { "arch" };
inline constexpr QLatin1StringView kKernel { "kernel" };
inline constexpr QLatin1StringView kCpus { "cpus" };
inline constexpr QLatin1StringView kMemoryBytes { "memory_bytes" };
inline constexpr QLatin1StringView kLabels { "labels" };
inline constexpr QLatin1StringView kMaxConcurrent { "max_concurrent" };
inline constexpr QLatin1StringView kMode { "mode" };
inline constexpr QLatin1StringView kEngine { "engine" };
inline constexpr QLatin1StringView kPresent { "present" };
inline constexpr QLatin1StringView kName { "name" };
inline constexpr QLatin1StringView kVersion { "version" };
inline constexpr QLatin1StringView kDefaultRuntime { "default_runtime" };
inline constexpr QLatin1StringView kRuntimes { "runtimes" };
inline constexpr QLatin1StringView kPath { "path" };
inline constexpr QLatin1StringView kKind { "kind" };
inline constexpr QLatin1StringView kReason { "reason" };
inline constexpr QLatin1StringView kKvm { "kvm" };
inline constexpr QLatin1StringView kPacketFilter { "packet_filter" };
inline constexpr QLatin1StringView kUsable { "usable" };
inline constexpr QLatin1StringView kUsbInventory { "usb_inventory" };
inline constexpr QLatin1StringView kBusId { "busid" };
inline constexpr QLatin1StringView kVid { "vid" };
inline constexpr QLatin1StringView kPid { "pid" };
inline constexpr QLatin1StringView kSerial { "serial" };
inline constexpr QLatin1StringView kProduct { "product" };
inline constexpr QLatin1StringView kSpeed { "speed" };
inline constexpr QLatin1StringView kUsbAttach { "usb_attach" };
inline constexpr QLatin1StringView kL2Attach { "l2_attach" };
inline constexpr QLatin1StringView kHarnesses { "harnesses" };
inline constexpr QLatin1StringView kHarnessInstallers { "harness_installers" };
inline constexpr QLatin1StringView kPossible { "possible" };
} // namespace key

const QString kNotReported = QStringLiteral("not reported by the agent");
const QString kNoReasonGiven = QStringLiteral("no reason given by the agent");

QString hex4(quint16 value)
{
    return QStringLiteral("%1").arg(value, 4, 16, QLatin1Char('0'));
}

// Reads one agent-sent object. The first problem is kept, with where it
// was ("engine.runtimes[1].kind"), and every later read is a no-op that
// returns a default, so the parser reads straight through.
class Reader
{
public:
    bool failed() const { return m_error.has_value(); }
    Error error() const { return *m_error; }

    void fail(const QString &where, const QString &what)
    {
        if (!m_error)
            m_error = Error::make(QStringLiteral("invalid_capabilities"),
                QStringLiteral("capabilities: %1 %2").arg(where, what), true);
    }

    QString text(const QJsonObject &object, QLatin1StringView name, const QString &where,
        qsizetype maxLength, bool required = false)
    {
        const auto value
            = field(object, name, where, &QJsonValue::isString, "must be a string", required);
        if (!value)
            return {};
        const QString result = value->toString();
        if (result.size() > maxLength) {
            fail(where + name, QStringLiteral("is longer than %1 characters").arg(maxLength));
            return {};
        }
        if (required && result.isEmpty())
            fail(where + name, QStringLiteral("is empty"));
        return result;
    }

    qint64 integer(const QJsonObject &object, QLatin1StringView name, const QString &where,
        qint64 minimum, qint64 maximum)
    {
        const auto value
            = field(object, name, where, &QJsonValue::isDouble, "must be an integer", true);
        if (!value)
            return minimum;
        const double number = value->toDouble();
        if (std::trunc(number) != number) {
            fail(where + name, QStringLiteral("must be an integer"));
            return minimum;
        }
        if (number < double(minimum) || number > double(maximum)) {
            fail(where + name,
                QStringLiteral("must be between %1 and %2").arg(minimum).arg(maximum));
            return minimum;
        }
        return qint64(number);
    }

    bool boolean(const QJsonObject &object, QLatin1StringView name, const QString &where)
    {
        const auto value = field(object, name, where, &QJsonValue::isBool, "must be true or false");
        return value && value->toBool();
    }

    // nullopt when absent (an older agent), or on a type error.
    std::optional<QJsonObject> object(
        const QJsonObject &parent, QLatin1StringView name, const QString &where)
    {
        const auto value = field(parent, name, where, &QJsonValue::isObject, "must be an object");
        return value ? std::optional<QJsonObject>(value->toObject()) : std::nullopt;
    }

    QJsonArray array(
        const QJsonObject &parent, QLatin1StringView name, const QString &where, qsizetype maxCount)
    {
        const auto value = field(parent, name, where, &QJsonValue::isArray, "must be an array");
        if (!value)
            return {};
        const QJsonArray result = value->toArray();
        if (result.size() > maxCount) {
            fail(where + name, QStringLiteral("has more than %1 entries").arg(maxCount));
            return {};
        }
        return result;
    }

    // An array element that must be an object.
    QJsonObject element(const QJsonValue &value, const QString &at)
    {
        if (!value.isObject())
            fail(at, QStringLiteral("must be an object"));
        return value.toObject();
    }

    // A yes/no section; a "no" without a reason gets one saying so.
    Caps::Verdict verdict(
        const QJsonObject &parent, QLatin1StringView name, QLatin1StringView yesKey)
    {
        const auto section = object(parent, name, {});
        if (!section)
            return { false, kNotReported };
        const QString where = QString(name) + QLatin1Char('.');
        Caps::Verdict result { boolean(*section, yesKey, where),
            text(*section, key::kReason, where, Caps::kMaxReasonLength) };
        if (!result.yes && result.reason.isEmpty())
            result.reason = kNoReasonGiven;
        return result;
    }

private:
    // The member `name` when it is there and of the right type; nullopt
    // when it is absent or null (a problem only when required) or of
    // another type (always a problem).
    std::optional<QJsonValue> field(const QJsonObject &object, QLatin1StringView name,
        const QString &where, bool (QJsonValue::*isType)() const, const char *mustBe,
        bool required = false)
    {
        const QJsonValue value = object.value(name);
        if (value.isUndefined() || value.isNull()) {
            if (required)
                fail(where + name, QStringLiteral("is missing"));
            return std::nullopt;
        }
        if (!(value.*isType)()) {
            fail(where + name, QLatin1String(mustBe));
            return std::nullopt;
        }
        return value;
    }

    std::optional<Error> m_error;
};

QJsonObject verdictJson(const Caps::Verdict &verdict, QLatin1StringView yesKey)
{
    QJsonObject object { { yesKey, verdict.yes } };
    if (!verdict.reason.isEmpty())
        object.insert(key::kReason, verdict.reason);
    return object;
}

QJsonObject engineJson(const Caps::ContainerEngine &engine)
{
    QJsonObject object { { key::kPresent, engine.present }, { key::kName, engine.name } };
    if (!engine.reason.isEmpty())
        object.insert(key::kReason, engine.reason);
    if (!engine.present)
        return object;
    object.insert(key::kVersion, engine.version);
    object.insert(key::kDefaultRuntime, engine.defaultRuntime);
    QJsonArray runtimes;
    for (const auto &runtime : engine.runtimes)
        runtimes.append(QJsonObject { { key::kName, runtime.name }, { key::kPath, runtime.path },
            { key::kKind, Caps::runtimeKindName(runtime.kind) } });
    object.insert(key::kRuntimes, runtimes);
    return object;
}

Caps::ContainerEngine readEngine(Reader &reader, const QJsonObject &parent)
{
    const auto section = reader.object(parent, key::kEngine, {});
    if (!section)
        return { false, {}, {}, {}, {}, kNotReported };
    const QString where = QStringLiteral("engine.");
    Caps::ContainerEngine engine;
    engine.present = reader.boolean(*section, key::kPresent, where);
    engine.name = reader.text(*section, key::kName, where, Caps::kMaxTextLength);
    engine.reason = reader.text(*section, key::kReason, where, Caps::kMaxReasonLength);
    if (!engine.present) {
        if (engine.reason.isEmpty())
            engine.reason = kNoReasonGiven;
        return engine;
    }
    engine.version = reader.text(*section, key::kVersion, where, Caps::kMaxTextLength);
    engine.defaultRuntime
        = reader.text(*section, key::kDefaultRuntime, where, Caps::kMaxTextLength);
    const QJsonArray runtimes = reader.array(*section, key::kRuntimes, where, Caps::kMaxRuntimes);
    for (qsizetype i = 0; i < runtimes.size() && !reader.failed(); ++i) {
        const QString at = QStringLiteral("engine.runtimes[%1].").arg(i);
        const QJsonObject item = reader.element(runtimes.at(i), at.chopped(1));
        Caps::OciRuntime runtime;
        runtime.name = reader.text(item, key::kName, at, Caps::kMaxTextLength, true);
        runtime.path = reader.text(item, key::kPath, at, Caps::kMaxReasonLength);
        const QString kind = reader.text(item, key::kKind, at, Caps::kMaxTextLength, true);
        const auto parsedKind = Caps::runtimeKindOf(kind);
        // The kind names are the canonical ones, not aliases like "runsc".
        if (!parsedKind || Caps::runtimeKindName(*parsedKind) != kind) {
            reader.fail(at + key::kKind, QStringLiteral("is not runc, crun, gvisor or kata"));
            break;
        }
        runtime.kind = *parsedKind;
        engine.runtimes.append(runtime);
    }
    return engine;
}

Caps::PacketFilter readPacketFilter(Reader &reader, const QJsonObject &parent)
{
    const auto section = reader.object(parent, key::kPacketFilter, {});
    if (!section)
        return { false, {}, {}, kNotReported };
    const QString where = QStringLiteral("packet_filter.");
    Caps::PacketFilter filter;
    filter.usable = reader.boolean(*section, key::kUsable, where);
    filter.name = reader.text(*section, key::kName, where, Caps::kMaxTextLength);
    filter.version = reader.text(*section, key::kVersion, where, Caps::kMaxTextLength);
    filter.reason = reader.text(*section, key::kReason, where, Caps::kMaxReasonLength);
    if (!filter.usable && filter.reason.isEmpty())
        filter.reason = kNoReasonGiven;
    return filter;
}

std::optional<quint16> parseHexId(const QString &text)
{
    static const QRegularExpression hex4Pattern(QStringLiteral("\\A[0-9a-f]{4}\\z"));
    if (!hex4Pattern.match(text).hasMatch())
        return std::nullopt;
    return quint16(text.toUInt(nullptr, 16));
}

QList<Caps::UsbDevice> readUsbInventory(Reader &reader, const QJsonObject &parent)
{
    static const QRegularExpression busIdPattern(
        QStringLiteral("\\A[0-9]{1,3}-[0-9]{1,3}(\\.[0-9]{1,3}){0,6}\\z"));
    const QJsonArray items = reader.array(parent, key::kUsbInventory, {}, Caps::kMaxUsbDevices);
    QList<Caps::UsbDevice> devices;
    for (qsizetype i = 0; i < items.size() && !reader.failed(); ++i) {
        const QString at = QStringLiteral("usb_inventory[%1].").arg(i);
        const QJsonObject item = reader.element(items.at(i), at.chopped(1));
        Caps::UsbDevice device;
        device.busId = reader.text(item, key::kBusId, at, Caps::kMaxTextLength, true);
        if (!reader.failed() && !busIdPattern.match(device.busId).hasMatch())
            reader.fail(at + key::kBusId, QStringLiteral("is not a USB bus id like 1-1.2"));
        const auto vendor = parseHexId(reader.text(item, key::kVid, at, 4, true));
        const auto product = parseHexId(reader.text(item, key::kPid, at, 4, true));
        if (!reader.failed() && (!vendor || !product))
            reader.fail(
                at.chopped(1), QStringLiteral("vid and pid must be four lower-case hex digits"));
        device.vendorId = vendor.value_or(0);
        device.productId = product.value_or(0);
        device.serial = reader.text(item, key::kSerial, at, Caps::kMaxTextLength);
        device.product = reader.text(item, key::kProduct, at, Caps::kMaxTextLength);
        device.speed = reader.text(item, key::kSpeed, at, Caps::kMaxTextLength);
        devices.append(device);
    }
    return devices;
}

QMap<QString, QString> readLabels(Reader &reader, const QJsonObject &parent)
{
    const auto section = reader.object(parent, key::kLabels, {});
    QMap<QString, QString> labels;
    if (!section)
        return labels;
    if (section->size() > Caps::kMaxLabels) {
        reader.fail(key::kLabels, QStringLiteral("has more than %1 entries").arg(Caps::kMaxLabels));
        return labels;
    }
    for (auto it = section->begin(); it != section->end() && !reader.failed(); ++it) {
        const QString at = QStringLiteral("labels.%1").arg(it.key().left(Caps::kMaxLabelKeyLength));
        if (!it.value().isString()) {
            reader.fail(at, QStringLiteral("must be a string"));
            break;
        }
        const Status valid = Caps::validateLabel(it.key(), it.value().toString());
        if (!valid.ok()) {
            reader.fail(at, valid.error().message);
            break;
        }
        labels.insert(it.key(), it.value().toString());
    }
    return labels;
}

// Absent from agents before harnesses were reported: none.
QMap<QString, QString> readHarnesses(Reader &reader, const QJsonObject &parent)
{
    QMap<QString, QString> harnesses;
    const QJsonValue value = parent.value(key::kHarnesses);
    if (value.isUndefined() || value.isNull())
        return harnesses;
    const QJsonObject section = value.toObject();
    if (!value.isObject() || section.size() > Caps::kMaxHarnesses) {
        reader.fail(key::kHarnesses,
            QStringLiteral("must be an object of at most %1 entries").arg(Caps::kMaxHarnesses));
        return harnesses;
    }
    for (auto it = section.begin(); it != section.end(); ++it) {
        const QString path = it.value().toString();
        if (!Caps::isHarnessName(it.key()) || !it.value().isString() || !path.startsWith(u'/')
            || path.size() > Caps::kMaxTextLength) {
            reader.fail(key::kHarnesses,
                QStringLiteral("entries must be a harness name and its absolute path"));
            return {};
        }
        harnesses.insert(it.key(), path);
    }
    return harnesses;
}

// Absent from agents before harnesses could be installed: none.
QStringList readHarnessInstallers(Reader &reader, const QJsonObject &parent)
{
    const QJsonValue value = parent.value(key::kHarnessInstallers);
    if (value.isUndefined() || value.isNull())
        return {};
    QStringList names;
    const QJsonArray list = value.toArray();
    if (!value.isArray() || list.size() > Caps::kMaxHarnesses) {
        reader.fail(key::kHarnessInstallers,
            QStringLiteral("must be an array of at most %1 names").arg(Caps::kMaxHarnesses));
        return {};
    }
    for (const QJsonValue &name : list) {
        if (!name.isString() || !Caps::isHarnessName(name.toString())) {
            reader.fail(key::kHarnessInstallers, QStringLiteral("entries must be harness names"));
            return {};
        }
        names.append(name.toString());
    }
    return names;
}

QString verdictText(const Caps::Verdict &verdict)
{
    QString text = verdict.yes ? QStringLiteral("yes") : QStringLiteral("no");
    if (!verdict.reason.isEmpty())
        text += QStringLiteral(" (%1)").arg(verdict.reason);
    return text;
}

QString memoryText(qint64 bytes)
{
    constexpr qint64 kMiB = 1024 * 1024;
    constexpr qint64 kGiB = 1024 * kMiB;
    if (bytes >= kGiB)
        return QStringLiteral("%1 GiB").arg(bytes / kGiB);
    return QStringLiteral("%1 MiB").arg(bytes / kMiB);
}

QString engineText(const Caps &caps)
{
    if (caps.mode == Caps::Mode::Host)
        return QStringLiteral("host mode");
    if (!caps.engine.present)
        return QStringLiteral("no container engine (%1)").arg(caps.engine.reason);
    QStringList names;
    for (const auto &runtime : caps.engine.runtimes)
        names.append(runtime.name);
    return QStringLiteral("%1 %2 (%3)")
        .arg(caps.engine.name, caps.engine.version,
            names.isEmpty() ? QStringLiteral("no runtime") : names.join(QStringLiteral(", ")));
}

// What an agent sent may hold newlines or escapes; one line stays one line.
QString withoutControlCharacters(QString text)
{
    for (QChar &c : text) {
        if (c.category() == QChar::Other_Control)
            c = QLatin1Char(' ');
    }
    return text;
}

} // namespace

QJsonObject AgentCapabilities::toJson() const
{
    QJsonObject labelObject;
    for (auto it = labels.cbegin(); it != labels.cend(); ++it)
        labelObject.insert(it.key(), it.value());

    QJsonArray usb;
    for (const auto &device : usbInventory) {
        QJsonObject item { { key::kBusId, device.busId }, { key::kVid, hex4(device.vendorId) },
            { key::kPid, hex4(device.productId) }, { key::kSpeed, device.speed } };
        if (!device.serial.isEmpty())
            item.insert(key::kSerial, device.serial);
        if (!device.product.isEmpty())
            item.insert(key::kProduct, device.product);
        usb.append(item);
    }

    QJsonObject filter { { key::kUsable, packetFilter.usable }, { key::kName, packetFilter.name } };
    if (!packetFilter.version.isEmpty())
        filter.insert(key::kVersion, packetFilter.version);
    if (!packetFilter.reason.isEmpty())
        filter.insert(key::kReason, packetFilter.reason);

    QJsonObject object { { key::kSoftware, softwareVersion }, { key::kProtocol, protocolVersion },
        { key::kOs, os }, { key::kArch, arch }, { key::kCpus, cpus },
        { key::kMemoryBytes, double(memoryBytes) }, { key::kLabels, labelObject },
        { key::kMaxConcurrent, maxConcurrent }, { key::kMode, modeName(mode) },
        { key::kEngine, engineJson(engine) }, { key::kKvm, verdictJson(kvm, key::kUsable) },
        { key::kPacketFilter, filter }, { key::kUsbInventory, usb },
        { key::kUsbAttach, verdictJson(usbAttach, key::kPossible) },
        { key::kL2Attach, verdictJson(l2Attach, key::kPossible) } };
    if (!kernel.isEmpty())
        object.insert(key::kKernel, kernel);
    if (!harnesses.isEmpty()) {
        QJsonObject found;
        for (auto it = harnesses.cbegin(); it != harnesses.cend(); ++it)
            found.insert(it.key(), it.value());
        object.insert(key::kHarnesses, found);
    }
    if (!harnessInstallers.isEmpty())
        object.insert(key::kHarnessInstallers, QJsonArray::fromStringList(harnessInstallers));
    return object;
}

Result<AgentCapabilities> AgentCapabilities::fromJson(QByteArrayView utf8)
{
    if (utf8.size() > kMaxSerializedBytes)
        return Error::make(QStringLiteral("invalid_capabilities"),
            QStringLiteral("capabilities: %1 bytes, more than the %2 allowed")
                .arg(utf8.size())
                .arg(kMaxSerializedBytes),
            true);
    QJsonParseError parseError {};
    const QJsonDocument document
        = QJsonDocument::fromJson(QByteArray::fromRawData(utf8.data(), utf8.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return Error::make(QStringLiteral("invalid_capabilities"),
            QStringLiteral("capabilities: not a JSON object (%1)").arg(parseError.errorString()),
            true);
    return fromJson(document.object());
}

Result<AgentCapabilities> AgentCapabilities::fromJson(const QJsonObject &object)
{
    Reader reader;
    AgentCapabilities caps;
    caps.softwareVersion = reader.text(object, key::kSoftware, {}, kMaxTextLength, true);
    caps.protocolVersion = int(reader.integer(object, key::kProtocol, {}, 1, 1'000'000));
    caps.os = reader.text(object, key::kOs, {}, kMaxTextLength, true);
    caps.arch = reader.text(object, key::kArch, {}, kMaxTextLength, true);
    caps.kernel = reader.text(object, key::kKernel, {}, kMaxTextLength);
    caps.cpus = int(reader.integer(object, key::kCpus, {}, 1, kMaxCpus));
    caps.memoryBytes = reader.integer(object, key::kMemoryBytes, {}, 0, kMaxJsonInteger);
    caps.labels = readLabels(reader, object);
    caps.maxConcurrent
        = int(reader.integer(object, key::kMaxConcurrent, {}, 1, kMaxConcurrentCeiling));

    const QString mode = reader.text(object, key::kMode, {}, kMaxTextLength, true);
    if (mode == modeName(Mode::Host))
        caps.mode = Mode::Host;
    else if (mode == modeName(Mode::Container))
        caps.mode = Mode::Container;
    else
        reader.fail(key::kMode, QStringLiteral("must be \"host\" or \"container\""));

    caps.engine = readEngine(reader, object);
    caps.kvm = reader.verdict(object, key::kKvm, key::kUsable);
    caps.packetFilter = readPacketFilter(reader, object);
    caps.usbInventory = readUsbInventory(reader, object);
    caps.usbAttach = reader.verdict(object, key::kUsbAttach, key::kPossible);
    caps.l2Attach = reader.verdict(object, key::kL2Attach, key::kPossible);
    caps.harnesses = readHarnesses(reader, object);
    caps.harnessInstallers = readHarnessInstallers(reader, object);

    if (reader.failed())
        return reader.error();
    return caps;
}

QString AgentCapabilities::summary() const
{
    // Joined, not .arg()-chained: an agent's text may itself hold "%1".
    const QString machine = os + QLatin1Char('/') + arch + QLatin1Char(' ') + QString::number(cpus)
        + (cpus == 1 ? QStringLiteral(" cpu ") : QStringLiteral(" cpus "))
        + memoryText(memoryBytes);
    const QStringList parts { machine, engineText(*this),
        QStringLiteral("usb: ") + verdictText(usbAttach),
        QStringLiteral("l2: ") + verdictText(l2Attach), QStringLiteral("kvm: ") + verdictText(kvm),
        QStringLiteral("max ") + QString::number(maxConcurrent) };
    QString text = parts.join(QStringLiteral(", "));
    if (!harnesses.isEmpty())
        text += QStringLiteral(", harnesses: ") + harnesses.keys().join(QStringLiteral(" "));
    return withoutControlCharacters(text);
}

bool AgentCapabilities::isHarnessName(const QString &name)
{
    static const QRegularExpression pattern(QStringLiteral("\\A[a-z0-9][a-z0-9._-]{0,62}\\z"));
    return pattern.match(name).hasMatch();
}

Result<int> AgentCapabilities::parseMaxConcurrent(const QString &text, const QString &option)
{
    bool numeric = false;
    const int value = text.toInt(&numeric);
    if (!numeric || value < 0 || value > kMaxConcurrentCeiling)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("%1 must be a number from 0 to %2")
                .arg(option)
                .arg(kMaxConcurrentCeiling),
            true);
    return value;
}

Status AgentCapabilities::validateLabel(const QString &key, const QString &value)
{
    static const QRegularExpression keyPattern(
        QStringLiteral("\\A[A-Za-z0-9][A-Za-z0-9._/-]{0,%1}\\z").arg(kMaxLabelKeyLength - 1));
    if (!keyPattern.match(key).hasMatch())
        return Error::make(QStringLiteral("invalid_label"),
            QStringLiteral("label key \"%1\" must be 1..%2 letters, digits, '.', "
                           "'_', '/' or '-', starting with a letter or digit")
                .arg(withoutControlCharacters(key.left(kMaxLabelKeyLength)),
                    QString::number(kMaxLabelKeyLength)),
            true);
    if (value.size() > kMaxLabelValueLength)
        return Error::make(QStringLiteral("invalid_label"),
            QStringLiteral("label \"%1\" has a value longer than %2 characters")
                .arg(key, QString::number(kMaxLabelValueLength)),
            true);
    for (const QChar c : value) {
        if (!c.isPrint())
            return Error::make(QStringLiteral("invalid_label"),
                QStringLiteral("label \"%1\" has a value with a character that is "
                               "not printable")
                    .arg(key),
                true);
    }
    return {};
}

QString AgentCapabilities::modeName(Mode mode)
{
    return mode == Mode::Host ? QStringLiteral("host") : QStringLiteral("container");
}

QString AgentCapabilities::runtimeKindName(RuntimeKind kind)
{
    switch (kind) {
    case RuntimeKind::Runc:
        return QStringLiteral("runc");
    case RuntimeKind::Crun:
        return QStringLiteral("crun");
    case RuntimeKind::Gvisor:
        return QStringLiteral("gvisor");
    case RuntimeKind::Kata:
        return QStringLiteral("kata");
    }
    return {};
}

std::optional<AgentCapabilities::RuntimeKind> AgentCapabilities::runtimeKindOf(
    const QString &nameOrPath)
{
    const QString name = QFileInfo(nameOrPath).fileName().toLower();
    if (name == QLatin1String("runc"))
        return RuntimeKind::Runc;
    if (name == QLatin1String("crun"))
        return RuntimeKind::Crun;
    if (name == QLatin1String("runsc") || name == QLatin1String("gvisor"))
        return RuntimeKind::Gvisor;
    if (name.startsWith(QLatin1String("kata"))
        || name.startsWith(QLatin1String("containerd-shim-kata")))
        return RuntimeKind::Kata;
    return std::nullopt;
}

} // namespace cloop::protocol
