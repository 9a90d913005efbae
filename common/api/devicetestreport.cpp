#include "common/api/devicetestreport.h"

#include "common/api/recordtables.h"

namespace cloop::api {

using namespace Qt::StringLiterals;

namespace {
using Report = DeviceTestReport;

constexpr std::tuple kCommonFields {
    Field { "ok"_L1, &Report::ok },
    Field { "problem"_L1, &Report::problem, WhenEmpty::LeftOut },
};

constexpr std::tuple kSegmentFields {
    Field { "interface"_L1, &Report::interfaceName },
    ObjectField { "link"_L1, &Report::link, &tables::deviceTestReportLinkFields },
    ObjectField { "counters"_L1, &Report::counters, &tables::deviceTestReportCountersFields },
    Field { "listened_ms"_L1, &Report::listenedMs, WhenEmpty::LeftOut },
};

// What the forwarder saw while it listened: written only when it did.
constexpr std::tuple kListenedFields {
    Field { "frames_seen"_L1, &Report::framesSeen },
    ListField { "frames"_L1, &Report::frames, &tables::deviceTestReportFrameFields },
};

constexpr std::tuple kUsbFields {
    ListField { "devices"_L1, &Report::devices, &tables::deviceTestReportUsbExportFields },
};
} // namespace

Result<DeviceTestReport> DeviceTestReport::fromJson(const QJsonObject &object)
{
    RecordReader read(object, "test report"_L1);
    DeviceTestReport report;
    const QString kind = read.text("kind"_L1);
    report.kind = protocol::parseDeviceKind(kind);
    if (!report.kind)
        report.unknownKind = kind;
    readFields(read, report, kCommonFields);
    if (report.isSegment()) {
        readFields(read, report, kSegmentFields);
        readFields(read, report, kListenedFields);
    } else if (report.isUsb()) {
        readFields(read, report, kUsbFields);
    }
    return read.finish(std::move(report));
}

QJsonObject DeviceTestReport::toJson() const
{
    QJsonObject object {
        { "kind"_L1, kind ? QString(protocol::deviceKindName(*kind)) : unknownKind },
    };
    writeFields(*this, object, kCommonFields);
    if (isSegment()) {
        writeFields(*this, object, kSegmentFields);
        if (listenedMs)
            writeFields(*this, object, kListenedFields);
    } else if (isUsb()) {
        writeFields(*this, object, kUsbFields);
    }
    return object;
}

} // namespace cloop::api
