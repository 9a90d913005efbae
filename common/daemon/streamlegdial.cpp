#include "common/daemon/streamlegdial.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "common/util/duration.h"

namespace cloop::daemon {

using protocol::CloseCode;
using tunnel::Channel;

StreamLegDial::StreamLegDial(Channel *handle, protocol::DirectLeg leg, QString description,
    Expected expected, const Dialer &dialer, std::chrono::milliseconds bound, QObject *parent)
    : QObject(parent)
    , m_handle(handle)
    , m_leg(std::move(leg))
    , m_description(std::move(description))
    , m_expected(std::move(expected))
{
    m_client = dialer ? dialer(m_leg, this) : nullptr;
    m_bound.setSingleShot(true);
    m_bound.setInterval(bound);
    connect(&m_bound, &QTimer::timeout, this, [this] {
        const QString limit = util::formatMilliseconds(m_bound.intervalAsDuration().count());
        fail(m_lastFailure.isEmpty() ? QStringLiteral("no stream within %1").arg(limit)
                                     : QStringLiteral("%1 (for %2)").arg(m_lastFailure, limit));
    });
    // The hub took the device back before the leg was up, or after; or,
    // before the stream came, gave up on legs because the other daemon's
    // failed: then the stream comes on the tunnels, as after our own failure.
    connect(handle, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
        if (!m_stream && reason.startsWith(protocol::kDirectLegUnreachable)) {
            giveUp(reason.mid(protocol::kDirectLegUnreachable.size()));
            return;
        }
        end(code, reason.isEmpty() ? QStringLiteral("the hub ended the device's stream") : reason);
    });
}

StreamLegDial::~StreamLegDial()
{
    if (!m_over)
        end(CloseCode::ConnectionLost, QStringLiteral("the daemon is stopping"));
}

QString StreamLegDial::destination() const
{
    if (m_client && !m_client->options().hubUrls.isEmpty())
        return m_client->options().hubUrls.constFirst().toString();
    return m_leg.url.isEmpty() ? QStringLiteral("its hub") : m_leg.url;
}

void StreamLegDial::start()
{
    if (!m_client) {
        fail(QStringLiteral("this daemon cannot dial %1").arg(destination()));
        return;
    }
    connect(m_client, &tunnel::TunnelClient::ready, this, [this] {
        connect(m_client->connection()->channels(), &tunnel::ChannelMultiplexer::channelRequested,
            this, &StreamLegDial::onStreamRequested);
    });
    // Until the stream came, the client tries again within the bound; a
    // leg lost after that is not dialled again (the hub decides).
    connect(m_client, &tunnel::TunnelClient::disconnected, this, [this](const QString &reason) {
        m_lastFailure = reason;
        if (m_stream)
            end(CloseCode::ConnectionLost,
                QStringLiteral("the direct leg to %1 was lost: %2").arg(destination(), reason));
    });
    connect(m_client, &tunnel::TunnelClient::refused, this,
        [this](const Error &error) { fail(error.message); });
    // Taken at once (a channel not taken in its turn is refused): the hub
    // hears below whether the leg was dialled.
    if (m_handle)
        m_handle->accept();
    m_bound.start();
    qCInfo(lcDaemon).noquote()
        << QStringLiteral("dialling %1 for %2").arg(destination(), m_description);
    m_client->start();
}

void StreamLegDial::onStreamRequested(Channel *stream)
{
    if (m_stream || m_over || !m_expected || !m_expected(stream->metadata())) {
        stream->refuse(QStringLiteral("this leg carries %1 only").arg(m_description));
        return;
    }
    m_bound.stop();
    m_stream = stream;
    connect(stream, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
        end(code, reason.isEmpty() ? QStringLiteral("the device's stream ended") : reason);
    });
    Q_EMIT arrived(stream);
    // A stream refused there ended both twins already, with its reason.
    if (!m_over && stream->state() == Channel::State::Closed)
        end(CloseCode::Refused, QStringLiteral("the device's stream was refused here"));
}

void StreamLegDial::fail(const QString &reason)
{
    if (m_over)
        return;
    m_over = true;
    qCWarning(lcDaemon).noquote() << QStringLiteral(
        "cannot reach %1 for %2, so its hub carries the stream: %3")
                                         .arg(destination(), m_description, reason);
    if (m_handle) {
        m_handle->disconnect(this);
        m_handle->close(
            CloseCode::Refused, QString(protocol::kDirectLegUnreachable) + reason.left(300));
    }
    concludeFailed(reason);
}

void StreamLegDial::giveUp(const QString &reason)
{
    if (m_over)
        return;
    m_over = true;
    qCInfo(lcDaemon).noquote() << QStringLiteral(
        "the hub carries %1 on the tunnels, not on a direct leg: %2")
                                      .arg(m_description, reason);
    concludeFailed(reason);
}

void StreamLegDial::concludeFailed(const QString &reason)
{
    finish();
    Q_EMIT failed(reason);
    Q_EMIT ended();
}

void StreamLegDial::end(CloseCode code, const QString &reason)
{
    if (m_over)
        return;
    m_over = true;
    // Each twin ends with the other's cause.
    for (Channel *side : { m_handle.data(), m_stream.data() }) {
        if (side && side->state() != Channel::State::Closed) {
            side->disconnect(this);
            if (side->state() == Channel::State::Opening)
                side->refuse(reason);
            else
                side->close(code, reason);
        }
    }
    finish();
    Q_EMIT ended();
}

void StreamLegDial::finish()
{
    m_bound.stop();
    if (m_client)
        m_client->disconnect(this);
    // Closing the connection at once would cut the stream's close short: its
    // queued bytes and the hub's answer would be lost, and its holder would
    // read a lost connection instead of the cause.
    if (Channel *stream = m_stream.data(); stream && stream->state() != Channel::State::Closed) {
        connect(stream, &Channel::closed, this, &StreamLegDial::leave);
        if (m_client)
            connect(m_client, &tunnel::TunnelClient::disconnected, this, &StreamLegDial::leave);
        QTimer::singleShot(kCloseGrace, this, &StreamLegDial::leave);
        return;
    }
    leave();
}

void StreamLegDial::leave()
{
    if (m_client)
        m_client->stop();
    deleteLater();
}

} // namespace cloop::daemon
