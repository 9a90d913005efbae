// Throughput and memory bound of two ChannelMultiplexers wired back to back.
//
//   bench_channelmux [MiB to move, default 256] [repetitions, default 3]
//
// The transport is an in-memory FIFO of encoded frames, pumped in a loop (no
// recursion between the two sides), so "in flight" is exactly what a real
// WebSocket would hold between the peers. The writer on the hub side keeps
// every channel's send queue as full as writableBytes() allows; the daemon
// side reads everything as soon as it arrives (and so grants credit back).
// Figures are medians over the repetitions; peaks are the maxima.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <vector>

#include <QCoreApplication>
#include <QElapsedTimer>

#include "bench/benchutil.h"
#include <QJsonObject>
#include <QList>
#include <QPointer>

#include "common/protocol/channelframe.h"
#include "common/tunnel/channelmultiplexer.h"

using cloop::protocol::FrameKind;
using cloop::tunnel::Channel;
using cloop::tunnel::ChannelMultiplexer;

namespace {

struct Figures
{
    double seconds = 0;
    quint64 bytes = 0;
    quint64 dataFrames = 0; // data frames delivered writer -> reader
    quint64 allFrames = 0; // every frame delivered, both directions
    qsizetype peakInFlight = 0;
    qsizetype peakQueued = 0;
    qsizetype peakTotal = 0;
};

// Two multiplexers and the frames between them.
class Link
{
public:
    Link()
        : m_hub(ChannelMultiplexer::Side::Hub)
        , m_daemon(ChannelMultiplexer::Side::Daemon)
    {
        QObject::connect(&m_hub, &ChannelMultiplexer::frameReady, &m_hub,
            [this](const QByteArray &frame) { enqueue(&m_daemon, frame); });
        QObject::connect(&m_daemon, &ChannelMultiplexer::frameReady, &m_daemon,
            [this](const QByteArray &frame) { enqueue(&m_hub, frame); });
        QObject::connect(
            &m_daemon, &ChannelMultiplexer::channelRequested, &m_daemon, [this](Channel *channel) {
                QObject::connect(channel, &Channel::readyRead, channel, [this, channel] {
                    m_received += static_cast<quint64>(channel->readAll().size());
                });
                channel->accept();
            });
    }

    Figures run(int channelCount, qsizetype writeSize, quint64 totalBytes)
    {
        QList<QPointer<Channel>> writers;
        for (int i = 0; i < channelCount; ++i) {
            auto opened = m_hub.openChannel(QJsonObject { { QStringLiteral("bench"), i } });
            if (!opened)
                cloop::bench::die("bench_channelmux", "cannot open a channel");
            writers.append(*opened);
        }
        drain(); // open + accept: not part of the measurement
        for (const auto &writer : std::as_const(writers)) {
            const Channel *channel = writer.data();
            if (!channel || channel->state() != Channel::State::Open)
                cloop::bench::die("bench_channelmux", "a channel did not open");
        }

        m_figures = Figures {};
        m_received = 0;
        const QByteArray chunk(writeSize, 'x');
        const quint64 perChannel = totalBytes / static_cast<quint64>(channelCount);
        std::vector<quint64> written(static_cast<size_t>(channelCount), 0);

        QElapsedTimer timer;
        timer.start();
        while (m_received < perChannel * static_cast<quint64>(channelCount)) {
            bool wrote = false;
            for (int i = 0; i < channelCount; ++i) {
                Channel *writer = writers.at(i).data();
                if (!writer)
                    cloop::bench::die("bench_channelmux", "a channel closed under the writer");
                quint64 &done = written[static_cast<size_t>(i)];
                while (done < perChannel) {
                    const auto size = static_cast<qsizetype>(
                        std::min<quint64>(static_cast<quint64>(writeSize), perChannel - done));
                    if (writer->writableBytes() < size)
                        break;
                    if (!writer->write(size == writeSize ? chunk : chunk.left(size)))
                        cloop::bench::die(
                            "bench_channelmux", "a write within writableBytes() was refused");
                    done += static_cast<quint64>(size);
                    wrote = true;
                    sample(writers);
                }
            }
            if (!wrote && m_queue.empty())
                cloop::bench::die(
                    "bench_channelmux", "stalled: nothing to write and nothing in flight");
            drain(writers);
        }
        m_figures.seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
        m_figures.bytes = m_received;
        const Figures result = m_figures;

        for (const auto &writer : std::as_const(writers)) {
            if (Channel *channel = writer.data())
                channel->close();
        }
        drain();
        if (m_hub.channelCount() != 0 || m_daemon.channelCount() != 0)
            cloop::bench::die("bench_channelmux", "channels left open after close");
        return result;
    }

private:
    struct Pending
    {
        ChannelMultiplexer *to;
        QByteArray frame;
    };

    void enqueue(ChannelMultiplexer *to, const QByteArray &frame)
    {
        m_inFlight += frame.size();
        m_queue.push_back(Pending { to, frame });
    }

    void drain(const QList<QPointer<Channel>> &writers = {})
    {
        while (!m_queue.empty()) {
            const Pending next = std::move(m_queue.front());
            m_queue.pop_front();
            m_inFlight -= next.frame.size();
            ++m_figures.allFrames;
            if (next.to == &m_daemon && static_cast<FrameKind>(next.frame.at(0)) == FrameKind::Data)
                ++m_figures.dataFrames;
            if (const auto status = next.to->handleFrame(next.frame); !status)
                cloop::bench::die("bench_channelmux", qPrintable(status.error().message));
            sample(writers);
        }
    }

    void sample(const QList<QPointer<Channel>> &writers)
    {
        qsizetype queued = 0;
        for (const auto &writer : writers) {
            if (const Channel *channel = writer.data())
                queued += channel->queuedBytes();
        }
        m_figures.peakInFlight = std::max(m_figures.peakInFlight, m_inFlight);
        m_figures.peakQueued = std::max(m_figures.peakQueued, queued);
        m_figures.peakTotal = std::max(m_figures.peakTotal, queued + m_inFlight);
    }

    ChannelMultiplexer m_hub;
    ChannelMultiplexer m_daemon;
    std::deque<Pending> m_queue;
    qsizetype m_inFlight = 0;
    quint64 m_received = 0;
    Figures m_figures;
};

void scenario(
    const char *name, int channels, qsizetype writeSize, quint64 totalBytes, int repetitions)
{
    std::vector<double> mbPerSecond;
    std::vector<double> framesPerSecond;
    Figures peaks;
    for (int rep = 0; rep < repetitions; ++rep) {
        Figures figures;
        {
            Link link;
            figures = link.run(channels, writeSize, totalBytes);
        }
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        if (figures.bytes
            != totalBytes / static_cast<quint64>(channels) * static_cast<quint64>(channels))
            cloop::bench::die("bench_channelmux", "bytes lost on the way");
        mbPerSecond.push_back(static_cast<double>(figures.bytes) / 1e6 / figures.seconds);
        framesPerSecond.push_back(static_cast<double>(figures.dataFrames) / figures.seconds);
        peaks.peakInFlight = std::max(peaks.peakInFlight, figures.peakInFlight);
        peaks.peakQueued = std::max(peaks.peakQueued, figures.peakQueued);
        peaks.peakTotal = std::max(peaks.peakTotal, figures.peakTotal);
        peaks.dataFrames = figures.dataFrames;
        peaks.allFrames = figures.allFrames;
    }
    std::printf("channelmux %-22s %8.1f MB/s, %9.0f data frames/s, peak in flight %8lld B, "
                "peak queued %8lld B, peak sum %8lld B (%llu data / %llu frames)\n",
        name, cloop::bench::median(mbPerSecond), cloop::bench::median(framesPerSecond),
        static_cast<long long>(peaks.peakInFlight), static_cast<long long>(peaks.peakQueued),
        static_cast<long long>(peaks.peakTotal), static_cast<unsigned long long>(peaks.dataFrames),
        static_cast<unsigned long long>(peaks.allFrames));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int mebibytes = cloop::bench::argument(
        argc, argv, 1, 256, "bench_channelmux [MiB, default 256] [repetitions, default 3]");
    const int repetitions = cloop::bench::argument(
        argc, argv, 2, 3, "bench_channelmux [MiB, default 256] [repetitions, default 3]");
    const quint64 total = static_cast<quint64>(mebibytes) * 1024 * 1024;

    const ChannelMultiplexer::Limits limits;
    std::printf("channelmux: %d MiB per scenario, median of %d, MB = 10^6 bytes; window %u B, "
                "send queue cap %lld B per channel, %lld B per connection\n",
        mebibytes, repetitions, limits.receiveWindow,
        static_cast<long long>(limits.maxQueuedPerChannel),
        static_cast<long long>(limits.maxQueuedPerConnection));
    scenario("1ch 64KiB writes:", 1, 64 * 1024, total, repetitions);
    scenario("4ch 64KiB writes:", 4, 64 * 1024, total, repetitions);
    scenario("1ch 1500B writes:", 1, 1500, total, repetitions);
    scenario("4ch 1500B writes:", 4, 1500, total, repetitions);
    return 0;
}
