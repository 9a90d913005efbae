// libFuzzer target: the reader of a server's answer to a daemon's WebSocket
// upgrade, the first bytes a daemon takes from whatever answers its dial.
//
// Input: the ChunkedInput format; the stream is the answer, read with the
// key of RFC 6455's example. Invariants: how the answer is split does not
// change the verdict, the status, the words or (once decided) how much of
// it was the answer; a verdict is never NeedMore once the connection ended;
// refusals and malformed answers always say why; an upgrade names no
// problem and ends with the head's blank line; and nothing is read after
// the verdict.

#include <cstddef>
#include <cstdint>

#include "common/net/websocketupgrade.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::fuzz::ChunkedInput;
using namespace cloop::net::websocket;
using Step = UpgradeResponseReader::Step;

namespace {

const QByteArray kKey = "dGhlIHNhbXBsZSBub25jZQ==";

struct Verdict
{
    Step step = Step::NeedMore;
    qsizetype consumed = 0;
    int status = 0;
    QString problem;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ChunkedInput input(QByteArrayView(data, static_cast<qsizetype>(size)));
    const QByteArrayView stream = input.stream();

    UpgradeResponseReader chunked(kKey);
    Verdict inPieces;
    input.forEachChunk([&](QByteArrayView bytes, qsizetype, qsizetype) {
        const auto progress = chunked.feed(bytes);
        check(progress.consumed >= 0 && progress.consumed <= bytes.size(),
            "a feed consumes at most what it was given");
        inPieces.consumed += progress.consumed;
        inPieces.step = progress.step;
        return progress.step == Step::NeedMore;
    });
    if (inPieces.step == Step::NeedMore)
        inPieces.step = chunked.finish().step;
    inPieces.status = chunked.status();
    inPieces.problem = chunked.problem();

    UpgradeResponseReader whole(kKey);
    Verdict atOnce;
    const auto progress = whole.feed(stream);
    atOnce.consumed = progress.consumed;
    atOnce.step = progress.step == Step::NeedMore ? whole.finish().step : progress.step;
    atOnce.status = whole.status();
    atOnce.problem = whole.problem();

    check(inPieces.step != Step::NeedMore, "an ended connection has a verdict");
    check(inPieces.step == atOnce.step, "the verdict does not depend on the split");
    check(inPieces.status == atOnce.status, "the status does not depend on the split");
    check(inPieces.problem == atOnce.problem, "the words do not depend on the split");
    if (inPieces.step == Step::Upgraded) {
        check(inPieces.consumed == atOnce.consumed, "the head ends at one place");
        check(inPieces.problem.isEmpty(), "an upgrade names no problem");
        check(inPieces.status == 101, "only a 101 upgrades");
        check(stream.first(inPieces.consumed).endsWith("\n\r\n")
                || stream.first(inPieces.consumed).endsWith("\n\n"),
            "an upgrade's head ends with its blank line");
    } else {
        check(!inPieces.problem.isEmpty(), "a failed upgrade says why");
    }
    check(whole.feed("HTTP/1.1 101 x\r\n\r\n").consumed == 0, "nothing is read after the verdict");
    return 0;
}
