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

#include "fuzzcheck.h"
#include "common/protocol/logrecord.h"

using cloop::fuzz::check;
using namespace cloop::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QByteArrayView input(data, static_cast<qsizetype>(size));
    if (input.isEmpty())
        return 0;
    const qsizetype sizeCount = qMin(qsizetype(static_cast<uint8_t>(input[0]) & 0x0f),
        input.size() - 1);
    const QByteArrayView sizes = input.sliced(1, sizeCount);
    const QByteArrayView stream = input.sliced(1 + sizeCount);

    LogRecordDecoder chunked;
    QList<LogRecord> records;
    qsizetype fed = 0;
    for (qsizetype i = 0; fed < stream.size(); ++i) {
        qsizetype chunk = stream.size() - fed;
        if (!sizes.isEmpty()) {
            const auto s = static_cast<uint8_t>(sizes[i % sizes.size()]);
            chunk = qMin(chunk, qsizetype(1) + qsizetype(s) * s);
        }
        const bool ok = chunked.feed(stream.sliced(fed, chunk)).ok();
        fed += chunk;
        records += chunked.takeRecords();
        check(chunked.bufferedBytes() <= kLogRecordHeaderSize + kMaxLogPayload,
            "the decoder buffers at most one record");
        if (!ok)
            break;
        check(chunked.consumedBytes() + quint64(chunked.bufferedBytes()) == quint64(fed),
            "a healthy decoder accounts for every byte fed");
    }
    check(chunked.failed() || chunked.consumedBytes() + quint64(chunked.bufferedBytes())
            == quint64(stream.size()),
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
    check(quint64(encoded.size()) == chunked.consumedBytes(),
        "re-encoded records are as long as the consumed prefix");
    check(QByteArrayView(encoded) == stream.first(encoded.size()),
        "encode(decode(bytes)) == the consumed prefix");

    LogRecordDecoder whole;
    const bool wholeOk = whole.feed(stream).ok();
    check(wholeOk == !chunked.failed(), "chunking does not change the verdict");
    check(whole.consumedBytes() == chunked.consumedBytes(),
        "chunking does not change what is consumed");
    check(whole.takeRecords() == records, "chunking does not change the records");
    if (!wholeOk)
        check(whole.error().message == chunked.error().message,
            "chunking does not change the error");
    return 0;
}
