#include "common/protocol/devicespec.h"

#include "common/util/jsonwriter.h"

#include <QRegularExpression>

namespace cloop::protocol {

namespace {
Error invalid(const QString &message)
{
    return Error::make(QStringLiteral("invalid_device"), message, true);
}

// A vendor or product id as written everywhere: four lower-case hex digits.
QString hex16(quint16 id)
{
    return QStringLiteral("%1").arg(id, 4, 16, QLatin1Char('0'));
}

std::optional<quint16> parseHex16(const QString &text)
{
    static const QRegularExpression hex4(QStringLiteral("\\A[0-9a-fA-F]{4}\\z"));
    if (!hex4.match(text).hasMatch())
        return std::nullopt;
    return static_cast<quint16>(text.toUInt(nullptr, 16));
}
} // namespace

bool isValidInterfaceName(const QString &name)
{
    const QByteArray bytes = name.toUtf8();
    if (bytes.isEmpty() || bytes.size() > 15 || name == QLatin1String(".")
        || name == QLatin1String(".."))
        return false;
    for (const char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == ':' || u <= 0x20 || u == 0x7f || u >= 0x80)
            return false;
    }
    return true;
}

Result<DeviceSpec> DeviceSpec::parseUsb(const QString &text)
{
    const int firstColon = text.indexOf(QLatin1Char(':'));
    if (firstColon < 0)
        return invalid(QStringLiteral("USB device \"%1\" is not VID:PID[:SERIAL] "
                                      "(four hex digits each, e.g. 1050:0407)")
                           .arg(text));
    const int secondColon = text.indexOf(QLatin1Char(':'), firstColon + 1);
    const QString vid = text.left(firstColon);
    const QString pid = secondColon < 0 ? text.mid(firstColon + 1)
                                        : text.mid(firstColon + 1, secondColon - firstColon - 1);
    const auto vendor = parseHex16(vid);
    const auto product = parseHex16(pid);
    if (!vendor || !product)
        return invalid(QStringLiteral("USB device \"%1\" is not VID:PID[:SERIAL] "
                                      "(four hex digits each, e.g. 1050:0407)")
                           .arg(text));
    DeviceSpec spec;
    spec.kind = Kind::Usb;
    spec.vendorId = *vendor;
    spec.productId = *product;
    if (secondColon >= 0) {
        spec.serial = text.mid(secondColon + 1);
        if (spec.serial.isEmpty() || spec.serial.size() > 126)
            return invalid(QStringLiteral("USB serial must be 1..126 characters"));
        for (const QChar c : std::as_const(spec.serial)) {
            if (!c.isPrint() || c.isSpace())
                return invalid(QStringLiteral("USB serial \"%1\" holds a character that is not "
                                              "printable")
                                   .arg(spec.serial));
        }
    }
    return spec;
}

Result<DeviceSpec> DeviceSpec::parseInterface(const QString &name)
{
    if (!isValidInterfaceName(name))
        return invalid(QStringLiteral("\"%1\" is not a valid network interface name "
                                      "(1-15 characters, no '/', ':' or spaces)")
                           .arg(name));
    DeviceSpec spec;
    spec.kind = Kind::Segment;
    spec.interfaceName = name;
    return spec;
}

QLatin1StringView deviceKindName(DeviceSpec::Kind kind)
{
    return kind == DeviceSpec::Kind::Usb ? QLatin1StringView("usb") : QLatin1StringView("l2");
}

std::optional<DeviceSpec::Kind> parseDeviceKind(QStringView name)
{
    for (const DeviceSpec::Kind kind : { DeviceSpec::Kind::Usb, DeviceSpec::Kind::Segment }) {
        if (name == deviceKindName(kind))
            return kind;
    }
    return std::nullopt;
}

Result<DeviceSpec> DeviceSpec::fromJson(const QJsonObject &object)
{
    const QString kind = object.value(QLatin1String("kind")).toString();
    const std::optional<Kind> known = parseDeviceKind(kind);
    if (known == Kind::Usb) {
        QString text = object.value(QLatin1String("vendor")).toString() + QLatin1Char(':')
            + object.value(QLatin1String("product")).toString();
        const QString serial = object.value(QLatin1String("serial")).toString();
        if (!serial.isEmpty())
            text += QLatin1Char(':') + serial;
        return parseUsb(text);
    }
    if (known == Kind::Segment)
        return parseInterface(object.value(QLatin1String("interface")).toString());
    return invalid(QStringLiteral("unknown device kind \"%1\"").arg(kind));
}

QJsonObject DeviceSpec::toJson() const
{
    QJsonObject object { { QStringLiteral("kind"), kindName() } };
    if (kind == Kind::Usb) {
        object.insert(QStringLiteral("vendor"), hex16(vendorId));
        object.insert(QStringLiteral("product"), hex16(productId));
        if (!serial.isEmpty())
            object.insert(QStringLiteral("serial"), serial);
    } else {
        object.insert(QStringLiteral("interface"), interfaceName);
    }
    return object;
}

void DeviceSpec::writeJson(util::JsonWriter &out) const
{
    // In QJsonObject's order (its keys sorted), so both ways write the same.
    out.beginObject();
    if (kind == Kind::Usb) {
        out.field(QLatin1StringView("kind"), deviceKindName(kind));
        out.field(QLatin1StringView("product"), hex16(productId));
        if (!serial.isEmpty())
            out.field(QLatin1StringView("serial"), serial);
        out.field(QLatin1StringView("vendor"), hex16(vendorId));
    } else {
        out.field(QLatin1StringView("interface"), interfaceName);
        out.field(QLatin1StringView("kind"), deviceKindName(kind));
    }
    out.endObject();
}

QString DeviceSpec::kindName() const
{
    return deviceKindName(kind);
}

QString DeviceSpec::describe() const
{
    if (kind == Kind::Segment)
        return QStringLiteral("l2 %1").arg(interfaceName);
    QString text = QStringLiteral("usb %1:%2").arg(hex16(vendorId), hex16(productId));
    if (!serial.isEmpty())
        text += QLatin1Char(':') + serial;
    return text;
}

} // namespace cloop::protocol
