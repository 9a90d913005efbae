#pragma once

// Shared by the tests of the stream decoders (log records, frame records).

#include <QByteArrayView>
#include <QList>
#include <QtGlobal>

namespace cloop::testing {

// Feeds `bytes` to a fresh decoder `chunkSize` bytes at a time and returns
// every record; any decode error or leftover byte is a test bug (fatal).
template <typename Decoder, typename Record>
QList<Record> decodeInChunks(QByteArrayView bytes, qsizetype chunkSize)
{
    Decoder decoder;
    QList<Record> records;
    while (!bytes.isEmpty()) {
        const qsizetype n = qMin(chunkSize, bytes.size());
        const auto status = decoder.feed(bytes.first(n));
        if (!status)
            qFatal("unexpected decode error: %s", qPrintable(status.error().message));
        records += decoder.takeRecords();
        bytes = bytes.sliced(n);
    }
    if (decoder.bufferedBytes() != 0)
        qFatal("bytes left over");
    return records;
}

} // namespace cloop::testing
