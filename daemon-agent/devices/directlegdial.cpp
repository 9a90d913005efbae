#include "daemon-agent/devices/directlegdial.h"

#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelclient.h"
#include "common/util/duration.h"
#include "daemon-agent/agentlogging.h"

namespace cloop::agent {

using protocol::CloseCode;
using tunnel::Channel;

DirectLegDial::DirectLegDial(Channel *handle, protocol::AgentDeviceOpen open, const Dialer &dialer,
    std::chrono::milliseconds bound, QObject *parent)
    : QObject(parent)
    , m_handle(handle)
    , m_open(std::move(open))
{
    m_client = dialer(*m_open.direct, this);
    m_bound.setSingleShot(true);
    m_bound.setInterval(bound);
    connect(&m_bound, &QTimer::timeout, this, [this] {
        const QString limit = util::formatMilliseconds(m_bound.intervalAsDuration().count());
        fail(m_lastFailure.isEmpty() ? QStringLiteral("no stream within %1").arg(limit)
                                     : QStringLiteral("%1 (for %2)").arg(m_lastFailure, limit));
    });
    // The hub took the device back before the leg was up, or after.
    connect(handle, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
        end(code, reason.isEmpty() ? QStringLiteral("the hub ended the device's stream") : reason);
    });
}

DirectLegDial::~DirectLegDial()
{
    if (!m_over)
        end(CloseCode::ConnectionLost, QStringLiteral("the agent is stopping"));
}

void DirectLegDial::start()
{
    if (!m_client) {
        fail(QStringLiteral("this agent cannot dial another hub member"));
        return;
    }
    connect(m_client, &tunnel::TunnelClient::ready, this, [this] {
        connect(m_client->connection()->channels(), &tunnel::ChannelMultiplexer::channelRequested,
            this, &DirectLegDial::onStreamRequested);
    });
    // Until the stream came, the client tries again within the bound; a
    // leg lost after that is not dialled again (the hub decides).
    connect(m_client, &tunnel::TunnelClient::disconnected, this, [this](const QString &reason) {
        m_lastFailure = reason;
        if (m_stream)
            end(CloseCode::ConnectionLost,
                QStringLiteral("the direct leg to %1 was lost: %2")
                    .arg(m_open.direct->url, reason));
    });
    connect(m_client, &tunnel::TunnelClient::refused, this,
        [this](const Error &error) { fail(error.message); });
    // Taken at once (a channel not taken in its turn is refused): the hub
    // hears below whether the leg was dialled.
    if (m_handle)
        m_handle->accept();
    m_bound.start();
    qCInfo(lcAgent).noquote() << QStringLiteral("run %1 dials %2 for %3 (binding %4)")
                                     .arg(m_open.runId)
                                     .arg(m_open.direct->url, m_open.name)
                                     .arg(m_open.bindingId);
    m_client->start();
}

void DirectLegDial::onStreamRequested(Channel *stream)
{
    const auto open = protocol::AgentDeviceOpen::fromMetadata(stream->metadata());
    if (m_stream || m_over || !open || open->direct || open->runId != m_open.runId
        || open->bindingId != m_open.bindingId || open->deviceKind != m_open.deviceKind
        || open->busId != m_open.busId) {
        stream->refuse(QStringLiteral("this leg carries %1 of run %2 only")
                           .arg(m_open.name)
                           .arg(m_open.runId));
        return;
    }
    m_bound.stop();
    m_stream = stream;
    connect(stream, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
        end(code, reason.isEmpty() ? QStringLiteral("the device's stream ended") : reason);
    });
    Q_EMIT arrived(stream, *open);
    if (m_over)
        return;
    if (stream->state() == Channel::State::Closed)
        end(CloseCode::Refused, QStringLiteral("the device could not be attached here"));
}

void DirectLegDial::fail(const QString &reason)
{
    if (m_over)
        return;
    qCWarning(lcAgent).noquote() << QStringLiteral(
        "run %1 cannot reach %2 for %3, so its hub carries the stream: %4")
                                        .arg(m_open.runId)
                                        .arg(m_open.direct->url, m_open.name, reason);
    m_over = true;
    m_bound.stop();
    if (m_handle) {
        m_handle->disconnect(this);
        m_handle->close(
            CloseCode::Refused, QString(protocol::kDirectLegUnreachable) + reason.left(300));
    }
    if (m_client) {
        m_client->disconnect(this);
        m_client->stop();
    }
    Q_EMIT failed(reason);
    Q_EMIT ended();
    deleteLater();
}

void DirectLegDial::end(CloseCode code, const QString &reason)
{
    if (m_over)
        return;
    m_over = true;
    m_bound.stop();
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
    if (m_client) {
        m_client->disconnect(this);
        m_client->stop();
    }
    Q_EMIT ended();
    deleteLater();
}

} // namespace cloop::agent
