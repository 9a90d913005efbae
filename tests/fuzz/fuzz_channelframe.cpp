// libFuzzer target: the binary channel frame codec.
//
// Invariants: a frame that decodes re-encodes to exactly the input bytes
// (the decoder is strict, so the encoding is canonical), and decoding the
// re-encoded bytes gives an equal frame.

#include <cstddef>
#include <cstdint>

#include "common/protocol/channelframe.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::protocol::ChannelFrame;

namespace {

bool sameFrame(const ChannelFrame &a, const ChannelFrame &b)
{
    return a.kind == b.kind && a.channel == b.channel && a.window == b.window
        && a.credit == b.credit && a.closeCode == b.closeCode && a.payload == b.payload;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(data, static_cast<qsizetype>(size));
    const auto first = cloop::protocol::decodeFrame(input);
    if (!first)
        return 0;

    const QByteArray encoded = cloop::protocol::encodeFrame(*first);
    check(encoded.size() <= cloop::protocol::kMaxFrameSize, "re-encoded frame fits the size limit");
    const auto second = cloop::protocol::decodeFrame(encoded);
    check(second.ok(), "a re-encoded frame decodes again");
    check(sameFrame(*first, *second), "decode(encode(frame)) == frame");
    check(QByteArrayView(encoded) == input, "encode(decode(bytes)) == bytes");
    return 0;
}
