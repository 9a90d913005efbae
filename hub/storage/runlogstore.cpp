#include "hub/storage/runlogstore.h"

#include <QDir>
#include <QFile>

namespace cloop::hub {

QString RunLogStore::pathOf(qint64 runId) const
{
    return QStringLiteral("%1/%2.log").arg(m_directory).arg(runId);
}

Status RunLogStore::append(qint64 runId, const QList<protocol::LogRecord> &records)
{
    if (!QDir().mkpath(m_directory))
        return Error::make(QStringLiteral("storage_error"), QStringLiteral("cannot create %1").arg(m_directory));
    QFile file(pathOf(runId));
    if (!file.open(QIODevice::Append))
        return Error::make(QStringLiteral("storage_error"),
                           QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString()));
    const QByteArray bytes = protocol::encodeLogRecords(records);
    if (file.write(bytes) != bytes.size() || !file.flush())
        return Error::make(QStringLiteral("storage_error"),
                           QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString()));
    return {};
}

Result<QList<protocol::LogRecord>> RunLogStore::read(qint64 runId, quint64 fromOffset, qsizetype maxBytes) const
{
    QFile file(pathOf(runId));
    if (!file.exists())
        return QList<protocol::LogRecord>();
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(QStringLiteral("storage_error"),
                           QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString()));
    protocol::LogRecordDecoder decoder;
    QList<protocol::LogRecord> out;
    qsizetype payload = 0;
    while (!file.atEnd() && payload < maxBytes) {
        if (Status fed = decoder.feed(file.read(256 * 1024)); !fed)
            return fed.error();
        for (protocol::LogRecord record : decoder.takeRecords()) {
            if (record.end() <= fromOffset || payload >= maxBytes)
                continue;
            if (record.offset < fromOffset) {
                // Cut the record to start where the reader is.
                const quint64 skip = fromOffset - record.offset;
                if (record.isGap())
                    record = protocol::LogRecord::gap(fromOffset, static_cast<quint32>(record.length() - skip));
                else
                    record = protocol::LogRecord::data(record.kind, fromOffset, record.payload.mid(static_cast<qsizetype>(skip)));
            }
            payload += record.payload.size();
            out.append(record);
        }
    }
    return out;
}

} // namespace cloop::hub
