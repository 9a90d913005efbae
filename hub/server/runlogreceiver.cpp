#include "hub/server/runlogreceiver.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "hub/storage/database.h"
#include "hub/storage/runlogstore.h"

namespace cloop::hub {

using protocol::CloseCode;

RunLogReceiver::RunLogReceiver(
    qint64 runId, qint64 resume, tunnel::Channel *channel, RunLogStore &logs)
    : QObject(channel)
    , m_runId(runId)
    , m_channel(channel)
    , m_logs(logs)
    , m_decoder(static_cast<quint64>(resume))
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &RunLogReceiver::retry);
    connect(channel, &tunnel::Channel::readyRead, this, &RunLogReceiver::receive);
}

void RunLogReceiver::receive()
{
    // While records wait for space, nothing more is read: the channel's
    // window closes and the agent holds the rest.
    tunnel::Channel *channel = m_channel.data();
    if (!channel || !m_waiting.isEmpty())
        return;
    if (Status fed = m_decoder.feed(channel->readAll()); !fed) {
        qCWarning(lcHub).noquote() << "run" << m_runId << "log refused:" << fed.error().message;
        channel->close(CloseCode::ProtocolError, fed.error().message);
        return;
    }
    m_waiting = m_decoder.takeRecords();
    if (!m_waiting.isEmpty())
        storeWaiting();
}

bool RunLogReceiver::storeWaiting()
{
    Status written = m_logs.append(m_runId, m_waiting);
    if (!written) {
        if (!m_retry.isActive() && m_retryPause == kFirstRetry) {
            // Once per stall, not at every retry.
            const bool full = written.error().code == kStorageFull;
            qCWarning(lcHub).noquote()
                << "run" << m_runId << (full ? "log waits for space:" : "log waits to be stored:")
                << written.error().message;
        }
        m_retry.start(m_retryPause);
        m_retryPause = std::min(m_retryPause * 2, kMaxRetry);
        return false;
    }
    if (m_retryPause != kFirstRetry) {
        qCInfo(lcHub).noquote() << "run" << m_runId << "log is stored again";
        m_retryPause = kFirstRetry;
    }
    const qint64 end = static_cast<qint64>(m_waiting.last().end());
    m_waiting.clear();
    Q_EMIT stored(end);
    return true;
}

void RunLogReceiver::retry()
{
    if (!storeWaiting())
        return;
    // What came meanwhile was left unread; no readyRead will tell of it.
    if (const tunnel::Channel *channel = m_channel.data(); channel && channel->bytesAvailable() > 0)
        receive();
}

} // namespace cloop::hub
