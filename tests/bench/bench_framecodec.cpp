// Encode and decode speed of channel frames.
//
//   bench_framecodec [MiB per repetition, default 256] [repetitions, default 5]
//
// Large frames: full 64 KiB data frames, MiB/64KiB of them per repetition.
// Small frames: data frames with a 64-byte payload (70 bytes on the wire),
// MiB * 4096 of them per repetition (1 Mi frames at the default).
// Each figure is the median over the repetitions.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <QElapsedTimer>

#include "bench/benchutil.h"

#include "common/protocol/channelframe.h"

namespace protocol = cloop::protocol;

namespace {

// Results land here so the optimiser cannot drop the work.
volatile qsizetype g_sink = 0;

using cloop::bench::Work;
using cloop::bench::workName;

// Seconds for `count` operations of one kind on `frame`.
double timeOnce(Work work, const protocol::ChannelFrame &frame, qint64 count)
{
    const QByteArray encoded = protocol::encodeFrame(frame);
    qsizetype sink = 0;
    QElapsedTimer timer;
    timer.start();
    for (qint64 i = 0; i < count; ++i) {
        switch (work) {
        case Work::Encode:
            sink += protocol::encodeFrame(frame).size();
            break;
        case Work::Decode: {
            const auto decoded = protocol::decodeFrame(encoded);
            if (!decoded)
                cloop::bench::die("bench_framecodec", "a frame failed to decode");
            sink += decoded->payload.size();
            break;
        }
        case Work::RoundTrip: {
            const auto decoded = protocol::decodeFrame(protocol::encodeFrame(frame));
            if (!decoded)
                cloop::bench::die("bench_framecodec", "a frame failed to decode");
            sink += decoded->payload.size();
            break;
        }
        }
    }
    const double seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    g_sink = g_sink + sink;
    return seconds;
}

void measure(const char *label, const protocol::ChannelFrame &frame, qint64 count, int repetitions)
{
    const auto payload = static_cast<double>(frame.payload.size());
    for (const Work work : { Work::Encode, Work::Decode, Work::RoundTrip }) {
        std::vector<double> seconds;
        for (int rep = 0; rep < repetitions; ++rep)
            seconds.push_back(timeOnce(work, frame, count));
        const double perSecond = static_cast<double>(count) / cloop::bench::median(seconds);
        std::printf("framecodec %-16s %-14s %8.3f M frames/s, %9.1f MB/s payload\n", label,
            workName(work), perSecond / 1e6, perSecond * payload / 1e6);
        std::fflush(stdout);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int mebibytes = cloop::bench::argument(
        argc, argv, 1, 256, "bench_framecodec [MiB, default 256] [repetitions, default 5]");
    const int repetitions = cloop::bench::argument(
        argc, argv, 2, 5, "bench_framecodec [MiB, default 256] [repetitions, default 5]");
    const qint64 largeCount = qint64(mebibytes) * 1024 * 1024 / protocol::kMaxDataPayload;
    const qint64 smallCount = qint64(mebibytes) * 4096;

    std::printf("framecodec: median of %d, %lld large / %lld small frames per run, "
                "MB = 10^6 bytes\n",
        repetitions, static_cast<long long>(largeCount), static_cast<long long>(smallCount));
    measure(
        "64KiB data:", protocol::ChannelFrame::data(7, QByteArray(protocol::kMaxDataPayload, 'x')),
        largeCount, repetitions);
    measure(
        "64B data:", protocol::ChannelFrame::data(7, QByteArray(64, 'x')), smallCount, repetitions);
    return 0;
}
