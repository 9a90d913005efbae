#include "common/device/usb/usbiddatabase.h"

#include <QFile>
#include <QStringDecoder>

#include <optional>

namespace cloop::device::usb {

namespace {

const char *const kSystemPaths[]
    = { "/usr/share/misc/usb.ids", "/usr/share/hwdata/usb.ids", "/var/lib/usbutils/usb.ids" };

// Four hex digits then at least one space: the start of every entry line.
std::optional<quint16> leadingId(QByteArrayView line)
{
    if (line.size() < 6)
        return std::nullopt;
    quint16 value = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = line[i];
        int digit = 0;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            digit = c - 'A' + 10;
        else
            return std::nullopt;
        value = quint16(value << 4 | digit);
    }
    if (line[4] != ' ')
        return std::nullopt;
    return value;
}

QString nameAfterId(QByteArrayView line)
{
    // Names are UTF-8 in current files; older ones had Latin-1, which a
    // strict decoder refuses, so those bytes are read as Latin-1.
    const QByteArrayView name = line.sliced(5).trimmed();
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString decoded = utf8.decode(name);
    if (utf8.hasError())
        decoded = QString::fromLatin1(name);
    return decoded;
}

} // namespace

UsbIdDatabase UsbIdDatabase::parse(QByteArrayView text)
{
    UsbIdDatabase database;
    // The vendor whose products follow; -1 outside a vendor's lines.
    qint32 vendor = -1;
    qsizetype start = 0;
    while (start < text.size()) {
        qsizetype end = text.indexOf('\n', start);
        if (end < 0)
            end = text.size();
        QByteArrayView line = text.sliced(start, end - start);
        start = end + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        if (line.startsWith("\t\t"))
            continue; // an interface
        if (line.startsWith('\t')) {
            const QByteArrayView entry = line.sliced(1);
            const auto product = leadingId(entry);
            if (vendor >= 0 && product)
                database.m_products.insert((quint32(vendor) << 16) | *product, nameAfterId(entry));
            continue;
        }
        // "C 03  HID", "AT …", "HID …": the tables after the vendors.
        const std::optional<quint16> id = leadingId(line);
        if (!id) {
            if (line.size() > 1 && line[1] == ' ' && line[0] >= 'A' && line[0] <= 'Z')
                break;
            vendor = -1;
            continue;
        }
        vendor = *id;
        database.m_vendors.insert(*id, nameAfterId(line));
    }
    return database;
}

Result<UsbIdDatabase> UsbIdDatabase::load(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("usb_ids_unreadable"),
            QStringLiteral("cannot read the USB ID database %1: %2").arg(path, file.errorString()));
    return parse(file.readAll());
}

const UsbIdDatabase &UsbIdDatabase::system()
{
    static const UsbIdDatabase database = [] {
        for (const char *path : kSystemPaths) {
            if (auto loaded = load(QString::fromLatin1(path)))
                return *loaded;
        }
        return UsbIdDatabase();
    }();
    return database;
}

} // namespace cloop::device::usb
