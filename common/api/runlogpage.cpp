#include "common/api/runlogpage.h"

#include "common/api/recordtables.h"

#include <algorithm>

namespace cloop::api {

using namespace Qt::StringLiterals;

namespace {
constexpr protocol::LogRecordKind kStreams[] = { protocol::LogRecordKind::Stdout,
    protocol::LogRecordKind::Stderr, protocol::LogRecordKind::Gap };
} // namespace

Result<RunLogPage::Entry> RunLogPage::Entry::fromJson(const QJsonObject &object)
{
    RecordReader read(object, "log"_L1);
    Entry entry;
    entry.offset = read.integer("offset"_L1);
    const QString stream = read.text("stream"_L1);
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
        entry.lost = read.integer("lost"_L1);
        entry.droppedBy = read.choice("dropped_by"_L1, tables::droppedByNames, DroppedBy::Hub);
    } else {
        entry.data = QByteArray::fromBase64(read.text("data"_L1).toLatin1());
    }
    return read.finish(std::move(entry));
}

QJsonObject RunLogPage::Entry::toJson() const
{
    QJsonObject object { { "offset"_L1, offset },
        { "stream"_L1, protocol::logRecordKindName(stream) } };
    if (isGap()) {
        object.insert("lost"_L1, lost);
        object.insert("dropped_by"_L1, droppedByName(droppedBy));
    } else {
        object.insert("data"_L1, QString::fromLatin1(data.toBase64()));
    }
    return object;
}

} // namespace cloop::api
