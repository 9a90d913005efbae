#pragma once

#include "common/protocol/logrecord.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <chrono>

namespace cloop::tunnel {
class Channel;
} // namespace cloop::tunnel

namespace cloop::hub {

class RunLogStore;

// Takes one run's output off the log channel its agent opened and stores
// it, telling what is stored. Output that cannot be stored (the data
// folder is full, the database does not answer) is never dropped: its
// records wait here, the channel is left unread so that its window closes
// and the agent keeps the rest in its journal, and storing is tried again,
// each time a little later, until it succeeds.
class RunLogReceiver final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunLogReceiver)

public:
    static constexpr std::chrono::milliseconds kFirstRetry { 250 };
    static constexpr std::chrono::milliseconds kMaxRetry { 4'000 };

    // `resume`: where the stored log ends, so where the first record must
    // start. Lives as long as the channel (its parent).
    RunLogReceiver(qint64 runId, qint64 resume, tunnel::Channel *channel, RunLogStore &logs);

    // Records read off the channel and not yet stored.
    qsizetype waitingRecords() const { return m_waiting.size(); }

Q_SIGNALS:
    // The stored log now ends at `end`.
    void stored(qint64 end);

private:
    void receive();
    // Stores what waits; false when it must wait longer.
    bool storeWaiting();
    void retry();

    qint64 m_runId;
    QPointer<tunnel::Channel> m_channel;
    RunLogStore &m_logs;
    protocol::LogRecordDecoder m_decoder;
    QList<protocol::LogRecord> m_waiting;
    QTimer m_retry;
    std::chrono::milliseconds m_retryPause { kFirstRetry };
};

} // namespace cloop::hub
