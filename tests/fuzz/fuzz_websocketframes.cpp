// libFuzzer target: the WebSocket frame reader the hub runs on every byte
// a client sends before and after it authenticates.
//
// Input: one byte of settings (bit 0: the peer masks, as a client does;
// bits 1-7: the message limit in KiB), then the ChunkedInput format.
// Invariants: how the stream is split does not change the messages, the
// verdict or the reason; every message obeys the rules the reader checks
// (control payloads within 125 bytes, text that is UTF-8, messages within
// the limit); re-written as frames, the messages read back the same; and
// nothing is held once the stream ends between messages.

#include <cstddef>
#include <cstdint>

#include "common/net/websocketframes.h"
#include "fuzzcheck.h"

#include <QStringDecoder>

using cloop::fuzz::check;
using cloop::fuzz::ChunkedInput;
using namespace cloop::net::websocket;

namespace {

bool sameMessages(const std::vector<Message> &a, const std::vector<Message> &b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].opcode != b[i].opcode || a[i].payload != b[i].payload || a[i].text != b[i].text
            || a[i].closeCode != b[i].closeCode)
            return false;
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const MessageReader::Limits limits { qsizetype(1 + (data[0] >> 1)) * 1024, (data[0] & 1) != 0 };
    const ChunkedInput input(QByteArrayView(data + 1, static_cast<qsizetype>(size - 1)));

    MessageReader chunked(limits);
    std::vector<Message> messages;
    std::optional<ReadFailure> failure;
    input.forEachChunk([&](QByteArrayView bytes, qsizetype, qsizetype) {
        failure = chunked.feed(bytes, messages);
        return !failure;
    });

    MessageReader whole(limits);
    std::vector<Message> wholeMessages;
    const auto wholeFailure = whole.feed(input.stream(), wholeMessages);
    check(failure.has_value() == wholeFailure.has_value(), "chunking does not change the verdict");
    check(sameMessages(messages, wholeMessages), "chunking does not change the messages");
    if (failure) {
        check(failure->reason == wholeFailure->reason, "chunking does not change the reason");
        check(chunked.bufferedBytes() == 0, "a failed reader holds nothing");
    }

    const MaskKey key { 0x12, 0x34, 0x56, 0x78 };
    QByteArray rewritten;
    for (const Message &message : messages) {
        check(message.payload.size() <= limits.maxMessageBytes, "messages are within the limit");
        switch (message.opcode) {
        case Opcode::Ping:
        case Opcode::Pong:
            check(message.payload.size() <= kMaxControlPayload, "control payloads are short");
            break;
        case Opcode::Close:
            check(message.payload.size() + 2 <= kMaxControlPayload, "control payloads are short");
            check(message.text == QString::fromUtf8(message.payload), "close reasons are text");
            break;
        case Opcode::Text: {
            QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
            const QString text = decoder.decode(message.payload);
            check(!decoder.hasError() && text == message.text, "text messages are UTF-8");
            break;
        }
        case Opcode::Binary:
            break;
        case Opcode::Continuation:
            check(false, "a continuation is never a message");
        }
        const QByteArray payload
            = message.opcode == Opcode::Close && message.closeCode != CloseCode::NoStatus
            ? closePayload(message.closeCode, message.text)
            : message.payload;
        appendFrame(rewritten, message.opcode, payload, limits.peerMasks ? &key : nullptr);
    }
    MessageReader again(limits);
    std::vector<Message> reread;
    check(!again.feed(rewritten, reread), "re-written messages read back");
    check(sameMessages(reread, messages), "re-written messages read back the same");
    check(again.bufferedBytes() == 0, "nothing is held between messages");
    return 0;
}
