// Append speed and memory of the agent's run output journal.
//
//   bench_outputjournal [MiB per repetition, default 256] [repetitions, default 3]
//
// Each scenario writes MiB of output into a journal with the default 1 MiB
// retention, in 64 KiB or 1 KiB writes alternating between stdout and
// stderr every 7 writes:
//   acked       the hub acknowledges the end every 256 KiB
//   acked+send  the same, and after each write the new records are taken
//               with recordsFrom() and encoded, as the agent's sender does
//   no acks     the hub is unreachable: the journal drops the oldest bytes
// Figures: median MB/s of payload appended, and the peak retainedBytes()
// seen after any write of any repetition (the bound is 1 MiB + 64 KiB).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <QElapsedTimer>

#include "bench/benchutil.h"

#include "common/protocol/logrecord.h"
#include "common/runs/outputjournal.h"

using cloop::runs::OutputJournal;
using cloop::runs::OutputStream;

namespace {

volatile qsizetype g_sink = 0;

enum class Mode
{
    Acked,
    AckedAndSent,
    Dropping
};

const char *modeName(Mode mode)
{
    switch (mode) {
    case Mode::Acked:
        return "acked";
    case Mode::AckedAndSent:
        return "acked+send";
    case Mode::Dropping:
        return "no acks";
    }
    return "?";
}

struct Run
{
    double seconds = 0;
    qsizetype peakRetained = 0;
    quint64 dropped = 0;
};

Run runOnce(Mode mode, qsizetype writeSize, qint64 totalBytes)
{
    constexpr quint64 ackEvery = 256 * 1024;
    const QByteArray write(writeSize, 'x');
    const qint64 writes = totalBytes / writeSize;
    OutputJournal journal;
    quint64 sent = 0;
    qsizetype sink = 0;
    Run run;
    QElapsedTimer timer;
    timer.start();
    for (qint64 i = 0; i < writes; ++i) {
        journal.append((i / 7) % 2 ? OutputStream::Stderr : OutputStream::Stdout, write);
        if (mode == Mode::AckedAndSent) {
            const auto records = journal.recordsFrom(sent);
            if (!records)
                cloop::bench::die("bench_outputjournal", "recordsFrom failed");
            sink += cloop::protocol::encodeLogRecords(*records).size();
            sent = journal.endOffset();
        }
        if (mode != Mode::Dropping
            && journal.endOffset() - journal.acknowledgedOffset() >= ackEvery) {
            if (!journal.acknowledge(journal.endOffset()))
                cloop::bench::die("bench_outputjournal", "acknowledge failed");
        }
        run.peakRetained = std::max(run.peakRetained, journal.retainedBytes());
    }
    run.seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    run.dropped = journal.bytesDropped();
    g_sink = g_sink + sink;
    return run;
}

void measure(Mode mode, qsizetype writeSize, qint64 totalBytes, int repetitions)
{
    std::vector<double> seconds;
    qsizetype peak = 0;
    quint64 dropped = 0;
    for (int rep = 0; rep < repetitions; ++rep) {
        const Run run = runOnce(mode, writeSize, totalBytes);
        seconds.push_back(run.seconds);
        peak = std::max(peak, run.peakRetained);
        dropped = run.dropped;
    }
    const double bytes = static_cast<double>(totalBytes / writeSize * writeSize);
    std::printf("outputjournal %5lld B writes %-11s %9.1f MB/s  peak retained %8lld B  "
                "dropped %lld B\n",
        static_cast<long long>(writeSize), modeName(mode),
        bytes / cloop::bench::median(seconds) / 1e6, static_cast<long long>(peak),
        static_cast<long long>(dropped));
    std::fflush(stdout);
    if (peak >= OutputJournal::kDefaultRetainBytes + cloop::protocol::kMaxLogPayload)
        cloop::bench::die("bench_outputjournal", "retainedBytes() went past its bound");
}

} // namespace

int main(int argc, char **argv)
{
    const int mebibytes = cloop::bench::argument(
        argc, argv, 1, 256, "bench_outputjournal [MiB, default 256] [repetitions, default 3]");
    const int repetitions = cloop::bench::argument(
        argc, argv, 2, 3, "bench_outputjournal [MiB, default 256] [repetitions, default 3]");
    const qint64 totalBytes = qint64(mebibytes) * 1024 * 1024;

    std::printf("outputjournal: median of %d, %d MiB per run, retain %lld B, "
                "MB = 10^6 bytes\n",
        repetitions, mebibytes, static_cast<long long>(OutputJournal::kDefaultRetainBytes));
    for (const Mode mode : { Mode::Acked, Mode::AckedAndSent, Mode::Dropping }) {
        for (const qsizetype writeSize : { qsizetype(64 * 1024), qsizetype(1024) })
            measure(mode, writeSize, totalBytes, repetitions);
    }
    return 0;
}
