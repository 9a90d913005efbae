#include "common/api/runlogpage.h"

#include <algorithm>

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<RunLogPage::Entry::DroppedBy>, 2> kDroppers { {
    { RunLogPage::Entry::DroppedBy::Hub, QLatin1StringView("hub") },
    { RunLogPage::Entry::DroppedBy::Agent, QLatin1StringView("agent") },
} };

constexpr protocol::LogRecordKind kStreams[] = { protocol::LogRecordKind::Stdout,
    protocol::LogRecordKind::Stderr, protocol::LogRecordKind::Gap };
} // namespace

QLatin1StringView RunLogPage::Entry::droppedByName(DroppedBy who)
{
    return nameIn(kDroppers, who);
}

Result<RunLogPage::Entry> RunLogPage::Entry::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("log"));
    Entry entry;
    entry.offset = read.integer(QLatin1StringView("offset"));
    const QString stream = read.text(QLatin1StringView("stream"));
    const auto *known = std::find_if(
        std::begin(kStreams), std::end(kStreams), [&stream](protocol::LogRecordKind kind) {
            return protocol::logRecordKindName(kind) == stream;
        });
    if (known == std::end(kStreams))
        read.fail(
            QStringLiteral("\"stream\" is not stdout, stderr or gap: \"%1\"").arg(stream.left(40)));
    else
        entry.stream = *known;
    if (entry.isGap()) {
        entry.lost = read.integer(QLatin1StringView("lost"));
        entry.droppedBy = read.choice(QLatin1StringView("dropped_by"), kDroppers, DroppedBy::Hub);
    } else {
        entry.data = QByteArray::fromBase64(read.text(QLatin1StringView("data")).toLatin1());
    }
    return read.finish(std::move(entry));
}

QJsonObject RunLogPage::Entry::toJson() const
{
    QJsonObject object { { QLatin1StringView("offset"), offset },
        { QLatin1StringView("stream"), protocol::logRecordKindName(stream) } };
    if (isGap()) {
        object.insert(QLatin1StringView("lost"), lost);
        object.insert(QLatin1StringView("dropped_by"), droppedByName(droppedBy));
    } else {
        object.insert(QLatin1StringView("data"), QString::fromLatin1(data.toBase64()));
    }
    return object;
}

Result<RunLogPage> RunLogPage::fromJson(const QJsonObject &object)
{
    RecordReader read(object, QLatin1StringView("run log"));
    RunLogPage page;
    auto records = listOf<Entry>(object, QLatin1StringView("records"));
    if (!records)
        read.fail(records.error().message);
    else
        page.records = std::move(*records);
    page.end = read.integer(QLatin1StringView("end"));
    page.expectedEnd = read.optionalInteger(QLatin1StringView("expected_end"));
    page.complete = read.flag(QLatin1StringView("complete"));
    page.finished = read.flag(QLatin1StringView("finished"));
    return read.finish(std::move(page));
}

QJsonObject RunLogPage::toJson() const
{
    return QJsonObject { { QLatin1StringView("records"), toJsonArray(records) },
        { QLatin1StringView("end"), end },
        { QLatin1StringView("expected_end"), integerOrNull(expectedEnd) },
        { QLatin1StringView("complete"), complete }, { QLatin1StringView("finished"), finished } };
}

} // namespace cloop::api
