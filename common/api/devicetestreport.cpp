#include "common/api/devicetestreport.h"

namespace cloop::api {

namespace {

using Report = DeviceTestReport;

template <typename Entry, typename WriteEntry>
QJsonArray writeList(const QList<Entry> &entries, WriteEntry writeEntry)
{
    QJsonArray out;
    for (const Entry &entry : entries)
        out.append(writeEntry(entry));
    return out;
}

Report::Frame readFrame(RecordReader &read)
{
    Report::Frame frame;
    frame.length = int(read.integer(QLatin1StringView("length")));
    frame.source = read.text(QLatin1StringView("source"));
    frame.destination = read.text(QLatin1StringView("destination"));
    frame.ethertype = read.text(QLatin1StringView("ethertype"));
    if (const auto vlan = read.optionalInteger(QLatin1StringView("vlan")))
        frame.vlan = int(*vlan);
    frame.summary = read.text(QLatin1StringView("summary"));
    return frame;
}

QJsonObject writeFrame(const Report::Frame &frame)
{
    // What a frame too short to have addresses lacks is left out, as the
    // forwarder leaves it out.
    QJsonObject object { { QLatin1StringView("length"), frame.length } };
    if (!frame.destination.isEmpty())
        object.insert(QLatin1StringView("destination"), frame.destination);
    if (!frame.source.isEmpty())
        object.insert(QLatin1StringView("source"), frame.source);
    if (!frame.ethertype.isEmpty())
        object.insert(QLatin1StringView("ethertype"), frame.ethertype);
    if (frame.vlan)
        object.insert(QLatin1StringView("vlan"), *frame.vlan);
    if (!frame.summary.isEmpty())
        object.insert(QLatin1StringView("summary"), frame.summary);
    return object;
}

Report::UsbExport readExport(RecordReader &read)
{
    Report::UsbExport device;
    device.busId = read.text(QLatin1StringView("busid"));
    device.path = read.text(QLatin1StringView("path"));
    device.vendorId = read.text(QLatin1StringView("vendor_id"));
    device.productId = read.text(QLatin1StringView("product_id"));
    device.bcdDevice = read.text(QLatin1StringView("bcd_device"));
    device.speed = read.text(QLatin1StringView("speed"));
    device.deviceClass = read.text(QLatin1StringView("class"));
    device.configuration = int(read.integer(QLatin1StringView("configuration")));
    device.interfaces = read.objects<Report::UsbInterface>(
        QLatin1StringView("interfaces"), [](RecordReader &entry) {
            return Report::UsbInterface { entry.text(QLatin1StringView("class")),
                entry.text(QLatin1StringView("subclass")),
                entry.text(QLatin1StringView("protocol")) };
        });
    return device;
}

QJsonObject writeExport(const Report::UsbExport &device)
{
    return QJsonObject { { QLatin1StringView("busid"), device.busId },
        { QLatin1StringView("path"), device.path },
        { QLatin1StringView("vendor_id"), device.vendorId },
        { QLatin1StringView("product_id"), device.productId },
        { QLatin1StringView("bcd_device"), device.bcdDevice },
        { QLatin1StringView("speed"), device.speed },
        { QLatin1StringView("class"), device.deviceClass },
        { QLatin1StringView("configuration"), device.configuration },
        { QLatin1StringView("interfaces"),
            writeList(device.interfaces, [](const Report::UsbInterface &interface) {
                return QJsonObject { { QLatin1StringView("class"), interface.interfaceClass },
                    { QLatin1StringView("subclass"), interface.subclass },
                    { QLatin1StringView("protocol"), interface.protocol } };
            }) } };
}

void readSegment(RecordReader &read, Report &report)
{
    report.interfaceName = read.text(QLatin1StringView("interface"));
    if (read.source().contains(QLatin1StringView("link"))) {
        const QJsonObject object = read.object(QLatin1StringView("link"));
        RecordReader link(object, QLatin1StringView("link"));
        report.link = Report::Link { link.flag(QLatin1StringView("up")),
            link.flag(QLatin1StringView("carrier")), int(link.integer(QLatin1StringView("mtu"))),
            link.text(QLatin1StringView("mac")) };
        if (auto checked = link.finish(*report.link); !checked)
            read.fail(checked.error().message);
    }
    if (read.source().contains(QLatin1StringView("counters"))) {
        const QJsonObject object = read.object(QLatin1StringView("counters"));
        RecordReader counters(object, QLatin1StringView("counters"));
        report.counters = Report::Counters { counters.integer(QLatin1StringView("rx_packets")),
            counters.integer(QLatin1StringView("rx_bytes")),
            counters.integer(QLatin1StringView("rx_dropped")),
            counters.integer(QLatin1StringView("tx_packets")),
            counters.integer(QLatin1StringView("tx_bytes")),
            counters.integer(QLatin1StringView("tx_dropped")) };
        if (auto checked = counters.finish(*report.counters); !checked)
            read.fail(checked.error().message);
    }
    report.listenedMs = read.optionalInteger(QLatin1StringView("listened_ms"));
    report.framesSeen = read.integer(QLatin1StringView("frames_seen"));
    report.frames = read.objects<Report::Frame>(QLatin1StringView("frames"), readFrame);
}

void writeSegment(const Report &report, QJsonObject &object)
{
    object.insert(QLatin1StringView("interface"), report.interfaceName);
    if (const auto &link = report.link)
        object.insert(QLatin1StringView("link"),
            QJsonObject { { QLatin1StringView("up"), link->up },
                { QLatin1StringView("carrier"), link->carrier },
                { QLatin1StringView("mtu"), link->mtu }, { QLatin1StringView("mac"), link->mac } });
    if (const auto &counters = report.counters)
        object.insert(QLatin1StringView("counters"),
            QJsonObject { { QLatin1StringView("rx_packets"), counters->rxPackets },
                { QLatin1StringView("rx_bytes"), counters->rxBytes },
                { QLatin1StringView("rx_dropped"), counters->rxDropped },
                { QLatin1StringView("tx_packets"), counters->txPackets },
                { QLatin1StringView("tx_bytes"), counters->txBytes },
                { QLatin1StringView("tx_dropped"), counters->txDropped } });
    if (report.listenedMs) {
        object.insert(QLatin1StringView("listened_ms"), *report.listenedMs);
        object.insert(QLatin1StringView("frames_seen"), report.framesSeen);
        object.insert(QLatin1StringView("frames"), writeList(report.frames, writeFrame));
    }
}

} // namespace

Result<DeviceTestReport> DeviceTestReport::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("test report"));
    DeviceTestReport report;
    const QString kind = read.text(QLatin1StringView("kind"));
    report.kind = protocol::parseDeviceKind(kind);
    if (!report.kind)
        report.unknownKind = kind;
    report.ok = read.flag(QLatin1StringView("ok"));
    report.problem = read.text(QLatin1StringView("problem"));
    if (report.isSegment())
        readSegment(read, report);
    else if (report.isUsb())
        report.devices = read.objects<UsbExport>(QLatin1StringView("devices"), readExport);
    return read.finish(std::move(report));
}

QJsonObject DeviceTestReport::toJson() const
{
    QJsonObject object { { QLatin1StringView("kind"),
                             kind ? QString(protocol::deviceKindName(*kind)) : unknownKind },
        { QLatin1StringView("ok"), ok } };
    if (!problem.isEmpty())
        object.insert(QLatin1StringView("problem"), problem);
    if (isSegment())
        writeSegment(*this, object);
    else if (isUsb())
        object.insert(QLatin1StringView("devices"), writeList(devices, writeExport));
    return object;
}

} // namespace cloop::api
