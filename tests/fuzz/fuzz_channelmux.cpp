// libFuzzer target: the channel multiplexer fed by a hostile peer.
//
// The input is a sequence of frames, each preceded by a 2-byte big-endian
// length, handed to a hub-side ChannelMultiplexer until handleFrame()
// reports the first protocol violation. The hub side accepts every channel
// the peer opens, reads everything that arrives and echoes it back, and has
// two channels of its own open (ids 2 and 4, with bytes waiting for credit)
// so accept, credit and close frames from the peer have something to act on.
//
// Beyond "never crash", checked after every frame: every frame the
// multiplexer emits decodes, the connection-wide queued byte count equals
// the sum over its channels and stays within the limits, and the channel
// count stays within maxChannels.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <QCoreApplication>
#include <QJsonObject>
#include <QList>
#include <QPointer>
#include <QtEndian>

#include "common/protocol/channelframe.h"
#include "common/tunnel/channelmultiplexer.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::protocol::CloseCode;
using cloop::tunnel::Channel;
using cloop::tunnel::ChannelMultiplexer;

namespace {

// Bytes the handler looks for at the start of received data to drive the
// local side: a graceful close (waits for the send queue) or an abort.
constexpr char kCloseGracefully = '\xfe';
constexpr char kCloseAbort = '\xff';

class Harness
{
public:
    Harness()
        : m_mux(ChannelMultiplexer::Side::Hub)
    {
        QObject::connect(
            &m_mux, &ChannelMultiplexer::frameReady, &m_mux, [](const QByteArray &encoded) {
                check(cloop::protocol::decodeFrame(encoded).ok(),
                    "every frame the multiplexer emits decodes");
            });
        QObject::connect(
            &m_mux, &ChannelMultiplexer::channelRequested, &m_mux, [this](Channel *channel) {
                serve(channel);
                channel->accept();
            });
        for (int i = 0; i < 2; ++i) {
            auto opened = m_mux.openChannel(QJsonObject { { QStringLiteral("own"), i } });
            check(opened.ok(), "a fresh multiplexer opens a channel");
            serve(*opened);
            check((*opened)->write(QByteArray(3000 + 70000 * i, 'h')),
                "a new channel queues a first write");
        }
        checkAccounting();
    }

    // False at the first protocol violation.
    bool feed(QByteArrayView frame)
    {
        const auto status = m_mux.handleFrame(frame);
        checkAccounting();
        return status.ok();
    }

    void finish()
    {
        m_mux.closeAll(QStringLiteral("fuzz input done"));
        check(m_mux.channelCount() == 0, "closeAll leaves no channel");
        check(m_mux.queuedBytes() == 0, "closeAll leaves nothing queued");
    }

private:
    void serve(Channel *channel)
    {
        m_channels.append(channel);
        QObject::connect(channel, &Channel::readyRead, channel, [channel] {
            const QByteArray bytes = channel->readAll();
            if (bytes.startsWith(kCloseGracefully)) {
                channel->close(CloseCode::Normal, QStringLiteral("asked to"));
                return;
            }
            if (bytes.startsWith(kCloseAbort)) {
                channel->close(CloseCode::ProtocolError, QStringLiteral("asked to abort"));
                return;
            }
            channel->write(bytes); // refused when the queue is full: that is fine
        });
    }

    void checkAccounting()
    {
        qsizetype sum = 0;
        for (const QPointer<Channel> &tracked : std::as_const(m_channels)) {
            if (const Channel *channel = tracked.data())
                sum += channel->queuedBytes();
        }
        const auto &limits = m_mux.limits();
        check(m_mux.queuedBytes() == sum, "connection queue == sum of channel queues");
        check(m_mux.queuedBytes() >= 0, "connection queue is not negative");
        check(m_mux.queuedBytes() <= limits.maxQueuedPerConnection,
            "connection queue within its limit");
        check(m_mux.channelCount() <= limits.maxChannels, "channel count within its limit");
    }

    ChannelMultiplexer m_mux;
    QList<QPointer<Channel>> m_channels;
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int * /*argc*/, char *** /*argv*/)
{
    // Channels delete themselves with deleteLater(): that needs an
    // application object. Its own argv, so libFuzzer's flags stay its own.
    // Never destroyed: tearing it down among the static destructors at exit
    // would race Qt's own globals.
    static int argc = 1;
    static char name[] = "fuzz_channelmux";
    static char *argv[] = { name, nullptr };
    static auto *app = new QCoreApplication(argc, argv);
    Q_UNUSED(app);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    {
        Harness harness;
        size_t pos = 0;
        while (pos + 2 <= size) {
            const size_t declared = qFromBigEndian<quint16>(data + pos);
            pos += 2;
            const size_t length = std::min(declared, size - pos);
            const auto *frame = reinterpret_cast<const char *>(data + pos);
            pos += length;
            if (!harness.feed(QByteArrayView(frame, static_cast<qsizetype>(length))))
                break;
        }
        harness.finish();
    }
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    return 0;
}
