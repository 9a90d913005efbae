// libFuzzer target: the hub's HTTP/1.x request parser (hub/edge), which
// reads what anyone on the internet sends to the hub's port.
//
// Input: the fuzzcheck.h chunked format; the high nibble of the first byte
// sets the body limit the "service" grants each request (0..15 x 97 bytes).
//
// Invariants: no head over the limits is ever handed out; no body over the
// limit granted, and a body of a declared length has that length; the
// parser always consumes or stops, never consumes past what it was given,
// fails with a status the front answers, stays failed; and feeding the
// stream in chunks gives the same heads, bodies and verdict as feeding it
// whole.

#include <cstddef>
#include <cstdint>

#include "fuzzcheck.h"
#include "hub/edge/httprequestparser.h"

#include <QCryptographicHash>

using cloop::fuzz::check;
using cloop::hub::edge::HttpRequestParser;

namespace {

constexpr qsizetype kBodyUnit = 97;

struct Transcript
{
    QList<QByteArray> events;
    bool failed = false;
};

QByteArray describeHead(const cloop::hub::edge::HttpRequestHead &head)
{
    QByteArray out
        = "H " + head.method + ' ' + head.target + " 1." + QByteArray::number(head.versionMinor);
    for (const auto &header : head.headers)
        out += '|' + header.name + '=' + header.value;
    out += head.upgrade ? " U" : "";
    out += head.chunked ? " C" : "";
    out += head.keepAlive ? " K" : "";
    if (head.contentLength)
        out += " L" + QByteArray::number(*head.contentLength);
    return out;
}

// Feeds one chunk, answering each stop as the front does; false once failed.
bool feedChunk(
    HttpRequestParser &parser, QByteArrayView chunk, qsizetype bodyLimit, Transcript &transcript)
{
    const HttpRequestParser::Limits limits;
    qsizetype offset = 0;
    for (int guard = 0; guard < 100'000; ++guard) {
        const auto progress = parser.feed(chunk.sliced(offset));
        check(progress.consumed >= 0 && progress.consumed <= chunk.size() - offset,
            "consumes only what it was given");
        offset += progress.consumed;
        switch (progress.step) {
        case HttpRequestParser::Step::NeedMore:
            check(offset == chunk.size(), "NeedMore only once everything is consumed");
            return true;
        case HttpRequestParser::Step::HeadComplete: {
            const auto &head = parser.head();
            check(head.size <= limits.maxHeadBytes + 1, "no head over the head limit");
            check(head.headers.size() <= limits.maxHeaders, "no more header fields than the limit");
            check(!head.method.isEmpty(), "a head has a method");
            transcript.events.append(describeHead(head));
            if (head.upgrade) {
                // The front hands an upgrade over and reads no further.
                transcript.events.append("upgrade");
                transcript.failed = true;
                return false;
            }
            parser.setBodyLimit(bodyLimit);
            if (parser.hasFailed()) {
                check(parser.error().status == 413, "a declared length over the limit is 413");
                transcript.events.append("F413");
                transcript.failed = true;
                return false;
            }
            break;
        }
        case HttpRequestParser::Step::MessageComplete: {
            const auto &head = parser.head();
            const QByteArray body = parser.takeBody();
            check(body.size() <= bodyLimit, "no body over the limit");
            if (head.contentLength)
                check(
                    quint64(body.size()) == *head.contentLength, "a body has its declared length");
            transcript.events.append(
                "B" + QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex().left(16));
            break;
        }
        case HttpRequestParser::Step::Failed: {
            const int status = parser.error().status;
            check(status == 400 || status == 413 || status == 431 || status == 505,
                "a status the front answers");
            check(!parser.error().reason.isEmpty(), "a failure says why");
            const auto again = parser.feed("GET / HTTP/1.1\r\n\r\n");
            check(again.step == HttpRequestParser::Step::Failed && again.consumed == 0,
                "a failed parser stays failed");
            transcript.events.append(
                "F" + QByteArray::number(status) + " " + parser.error().reason);
            transcript.failed = true;
            return false;
        }
        }
    }
    cloop::fuzz::fail("the parser makes progress");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(data, static_cast<qsizetype>(size));
    if (input.isEmpty())
        return 0;
    const qsizetype bodyLimit = (static_cast<uint8_t>(input[0]) >> 4) * kBodyUnit;
    const cloop::fuzz::ChunkedInput chunked(input);

    HttpRequestParser inChunks;
    Transcript chunkedTranscript;
    chunked.forEachChunk([&](QByteArrayView bytes, qsizetype, qsizetype) {
        return feedChunk(inChunks, bytes, bodyLimit, chunkedTranscript);
    });

    HttpRequestParser whole;
    Transcript wholeTranscript;
    feedChunk(whole, chunked.stream(), bodyLimit, wholeTranscript);

    check(
        chunkedTranscript.failed == wholeTranscript.failed, "chunking does not change the verdict");
    check(chunkedTranscript.events == wholeTranscript.events,
        "chunking does not change heads, bodies or errors");
    return 0;
}
