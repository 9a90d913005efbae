#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace cloop::fuzz {

// A broken invariant: say which, then abort() so libFuzzer (or the replay
// driver under ctest) records the input as a crash. Kept free of Q_ASSERT so
// it fires in release builds too.
[[noreturn]] inline void fail(const char *invariant)
{
    std::fprintf(stderr, "fuzz invariant broken: %s\n", invariant);
    std::fflush(stderr);
    std::abort();
}

inline void check(bool holds, const char *invariant)
{
    if (!holds)
        fail(invariant);
}

// An input for a stream decoder: the low nibble of the first byte says how
// many chunk-size bytes follow; the rest is the stream, fed in chunks of
// 1 + s*s bytes cycling through those sizes (or whole when there are none),
// so the fuzzer explores split points as well as contents.
class ChunkedInput
{
public:
    explicit ChunkedInput(QByteArrayView input)
    {
        if (input.isEmpty())
            return;
        const qsizetype count
            = qMin(qsizetype(static_cast<uint8_t>(input[0]) & 0x0f), input.size() - 1);
        m_sizes = input.sliced(1, count);
        m_stream = input.sliced(1 + count);
    }

    QByteArrayView stream() const { return m_stream; }

    // feed(chunk, index, fedSoFar) for consecutive chunks covering the
    // stream, until it returns false.
    template <typename Feed> void forEachChunk(Feed &&feed) const
    {
        qsizetype fed = 0;
        for (qsizetype i = 0; fed < m_stream.size(); ++i) {
            qsizetype chunk = m_stream.size() - fed;
            if (!m_sizes.isEmpty()) {
                const auto s = static_cast<uint8_t>(m_sizes[i % m_sizes.size()]);
                chunk = qMin(chunk, qsizetype(1) + qsizetype(s) * s);
            }
            const QByteArrayView bytes = m_stream.sliced(fed, chunk);
            fed += chunk;
            if (!feed(bytes, i, fed))
                return;
        }
    }

private:
    QByteArrayView m_sizes;
    QByteArrayView m_stream;
};

// What every stream decoder's target checks once the chunks are in: the
// records decoded re-encode to exactly the prefix consumed, and decoding
// the stream whole gives the same records, verdict and error.
template <typename Decoder, typename Record>
void checkAgainstWholeDecoding(QByteArrayView stream, Decoder &chunked,
    const QList<Record> &records, const QByteArray &encoded)
{
    check(quint64(encoded.size()) == chunked.consumedBytes(),
        "re-encoded records are as long as the consumed prefix");
    check(QByteArrayView(encoded) == stream.first(encoded.size()),
        "encode(decode(bytes)) == the consumed prefix");
    Decoder whole;
    const bool wholeOk = whole.feed(stream).ok();
    check(wholeOk == !chunked.failed(), "chunking does not change the verdict");
    check(whole.consumedBytes() == chunked.consumedBytes(),
        "chunking does not change what is consumed");
    check(whole.takeRecords() == records, "chunking does not change the records");
    if (!wholeOk)
        check(
            whole.error().message == chunked.error().message, "chunking does not change the error");
}

} // namespace cloop::fuzz
