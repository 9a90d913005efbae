// libFuzzer target: the incremental decoder of run output records.
//
// Input: byte 0 says how many chunk-size bytes follow (its low 4 bits; 0 =
// feed everything at once); each of those bytes s gives a chunk of 1 + s*s
// bytes (1 .. 65026), used in turn and cyclically; the rest is the stream.
//
// Invariants: no crash; every decoded record is valid and continues the
// previous one; re-encoding the records reproduces the consumed prefix of the
// stream byte for byte; what is buffered is at most one record; and chunking
// does not matter: feeding it whole gives the same records, the same
// consumed length and the same verdict.

#include <cstddef>
#include <cstdint>

#include "common/protocol/logrecord.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::fuzz::ChunkedInput;
using namespace cloop::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ChunkedInput input(QByteArrayView(data, static_cast<qsizetype>(size)));
    const QByteArrayView stream = input.stream();

    LogRecordDecoder chunked;
    QList<LogRecord> records;
    input.forEachChunk([&](QByteArrayView bytes, qsizetype, qsizetype fed) {
        const bool ok = chunked.feed(bytes).ok();
        records += chunked.takeRecords();
        check(chunked.bufferedBytes() <= kLogRecordHeaderSize + kMaxLogPayload,
            "the decoder buffers at most one record");
        if (!ok)
            return false;
        check(chunked.consumedBytes() + quint64(chunked.bufferedBytes()) == quint64(fed),
            "a healthy decoder accounts for every byte fed");
        return true;
    });
    check(chunked.failed()
            || chunked.consumedBytes() + quint64(chunked.bufferedBytes()) == quint64(stream.size()),
        "a decoder that did not fail took the whole stream");
    if (chunked.failed())
        check(!chunked.feed(stream.first(qMin(stream.size(), qsizetype(20)))).ok(),
            "a failed decoder stays failed");

    for (qsizetype i = 0; i < records.size(); ++i) {
        check(validateLogRecord(records[i]).ok(), "decoded records are valid");
        if (i > 0)
            check(records[i].offset == records[i - 1].end(), "records are contiguous");
    }
    const QByteArray encoded = encodeLogRecords(records);
    cloop::fuzz::checkAgainstWholeDecoding(stream, chunked, records, encoded);
    return 0;
}
