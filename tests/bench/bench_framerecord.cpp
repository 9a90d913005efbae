// Speed of the layer-2 hot path's pure parts: frame records on a device
// channel, and checksum completion.
//
//   bench_framerecord [MiB of frames per repetition, default 256] [repetitions, default 5]
//
// Records: 1514-byte frames (a full untagged MTU frame) and the largest
// frame a record carries (a 64 KiB GSO frame plus Ethernet header and tag).
// Encoding appends to one buffer that is handed on every MiB, as a channel
// writer batches; decoding feeds the stream in 64 KiB pieces, the size of a
// channel data frame, and takes every record with next().
// Checksums: completeChecksum on a 1514-byte UDP/IPv4 frame whose checksum
// was left to offload, re-seeded before each call.
// Gbit/s counts Ethernet frame bytes only (not the record or vnet header).
// Each figure is the median over the repetitions.

#include <cstdio>
#include <cstring>
#include <vector>

#include <QElapsedTimer>
#include <QtEndian>

#include "bench/benchutil.h"

#include "common/device/l2/ethernetframe.h"
#include "common/protocol/framerecord.h"

namespace l2 = cloop::device::l2;
namespace protocol = cloop::protocol;

namespace {

constexpr const char *kUsage = "bench_framerecord [MiB, default 256] [repetitions, default 5]";
constexpr qsizetype kBatchBytes = 1024 * 1024;
constexpr qsizetype kFeedBytes = 64 * 1024;

// Results land here so the optimiser cannot drop the work.
volatile qsizetype g_sink = 0;

using cloop::bench::Work;
using cloop::bench::workName;

l2::VnetHeader offloadHeader()
{
    l2::VnetHeader header;
    header.flags = l2::VnetHeader::kNeedsCsum;
    header.csumStart = 34;
    header.csumOffset = 6;
    return header;
}

QByteArray sampleFrame(qsizetype size)
{
    QByteArray frame(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        frame[i] = static_cast<char>(i * 31 + 7);
    return frame;
}

qsizetype drain(protocol::FrameRecordDecoder &decoder, QByteArrayView stream, qint64 &records)
{
    qsizetype sink = 0;
    protocol::FrameRecord record;
    while (!stream.isEmpty()) {
        const qsizetype n = qMin(kFeedBytes, stream.size());
        if (!decoder.feed(stream.first(n)))
            cloop::bench::die("bench_framerecord", "the stream failed to decode");
        stream = stream.sliced(n);
        while (decoder.next(record)) {
            sink += record.frame.size();
            ++records;
        }
    }
    return sink;
}

// Seconds for `count` records of `frame` through one kind of work.
double timeRecords(Work work, const QByteArray &frame, qint64 count)
{
    const l2::VnetHeader header = offloadHeader();
    const qsizetype recordBytes
        = protocol::kFrameRecordLengthBytes + l2::VnetHeader::kSize + frame.size();
    // For decoding alone: one batch, decoded again and again.
    const qint64 perBatch = qMax<qint64>(1, kBatchBytes / recordBytes);
    QByteArray batch;
    for (qint64 i = 0; i < perBatch; ++i)
        protocol::appendFrameRecord(batch, header, frame);

    QByteArray out;
    out.reserve(kBatchBytes + recordBytes);
    protocol::FrameRecordDecoder decoder;
    qsizetype sink = 0;
    qint64 done = 0;
    QElapsedTimer timer;
    timer.start();
    switch (work) {
    case Work::Encode:
        for (qint64 i = 0; i < count; ++i) {
            protocol::appendFrameRecord(out, header, frame);
            if (out.size() >= kBatchBytes) {
                sink += out.size();
                out.resize(0); // keeps the capacity, as a reused send buffer would
            }
        }
        sink += out.size();
        break;
    case Work::Decode:
        while (done < count)
            sink += drain(decoder, batch, done);
        break;
    case Work::RoundTrip:
        for (qint64 i = 0; i < count; ++i) {
            protocol::appendFrameRecord(out, header, frame);
            if (out.size() >= kBatchBytes || i + 1 == count) {
                sink += drain(decoder, out, done);
                out.resize(0); // keeps the capacity, as a reused send buffer would
            }
        }
        if (done != count)
            cloop::bench::die("bench_framerecord", "records went missing");
        break;
    }
    const double seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    g_sink = g_sink + sink;
    return seconds;
}

void report(const char *label, const char *work, qint64 count, double seconds, qsizetype frameBytes)
{
    const double perSecond = static_cast<double>(count) / seconds;
    std::printf("framerecord %-18s %-14s %9.3f M frames/s, %7.2f Gbit/s\n", label, work,
        perSecond / 1e6, perSecond * static_cast<double>(frameBytes) * 8 / 1e9);
    std::fflush(stdout);
}

void measureRecords(const char *label, qsizetype frameBytes, qint64 count, int repetitions)
{
    const QByteArray frame = sampleFrame(frameBytes);
    for (const Work work : { Work::Encode, Work::Decode, Work::RoundTrip }) {
        std::vector<double> seconds;
        for (int rep = 0; rep < repetitions; ++rep)
            seconds.push_back(timeRecords(work, frame, count));
        report(label, workName(work), count, cloop::bench::median(seconds), frameBytes);
    }
}

// A 1514-byte UDP/IPv4 frame as a sender with checksum offload leaves it:
// the UDP checksum field holds a seed, here an arbitrary one.
QByteArray udpFrame()
{
    QByteArray frame = sampleFrame(1514);
    const uchar ethernetAndIp[] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0,
        0x05, 0xdc, 0, 0, 0x40, 0, 0x40, 17, 0, 0, 192, 168, 10, 1, 192, 168, 10, 2 };
    std::memcpy(frame.data(), ethernetAndIp, sizeof ethernetAndIp);
    qToBigEndian<quint16>(0x1234, frame.data() + 34 + 6);
    return frame;
}

void measureChecksum(qint64 count, int repetitions)
{
    QByteArray frame = udpFrame();
    const l2::VnetHeader seeded = offloadHeader();
    std::vector<double> seconds;
    for (int rep = 0; rep < repetitions; ++rep) {
        qsizetype sink = 0;
        QElapsedTimer timer;
        timer.start();
        for (qint64 i = 0; i < count; ++i) {
            l2::VnetHeader header = seeded;
            qToBigEndian<quint16>(0x1234, frame.data() + 34 + 6);
            if (!l2::completeChecksum(frame, header))
                cloop::bench::die("bench_framerecord", "checksum completion failed");
            sink += static_cast<quint8>(frame[34 + 6]);
        }
        seconds.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e9);
        g_sink = g_sink + sink;
    }
    report("1514B UDP/IPv4:", "checksum", count, cloop::bench::median(seconds), frame.size());
}

} // namespace

int main(int argc, char **argv)
{
    const int mebibytes = cloop::bench::argument(argc, argv, 1, 256, kUsage);
    const int repetitions = cloop::bench::argument(argc, argv, 2, 5, kUsage);
    const qint64 bytes = qint64(mebibytes) * 1024 * 1024;
    const qint64 mtuCount = bytes / 1514;
    const qint64 maxCount = qMax<qint64>(1, bytes / l2::kMaxFrameBytes);

    std::printf("framerecord: median of %d, %lld MTU / %lld maximal records per run, "
                "Gbit = 10^9 bits of frame\n",
        repetitions, static_cast<long long>(mtuCount), static_cast<long long>(maxCount));
    measureRecords("1514B frames:", 1514, mtuCount, repetitions);
    measureRecords("65553B frames:", l2::kMaxFrameBytes, maxCount, repetitions);
    measureChecksum(mtuCount, repetitions);
    return 0;
}
