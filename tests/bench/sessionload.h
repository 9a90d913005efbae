#pragma once

// Many real forwarder sessions from one process: the project's own tunnel
// client over TLS WebSockets, answering heartbeats, each redeeming a token
// once and reconnecting with its credential and the daemons' backoff, as
// thousands of forwarders would. Also what a process costs while it runs.

#include "common/tunnel/tunnelclient.h"

#include <QElapsedTimer>
#include <QMap>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QUrl>

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace cloop::bench {

struct HubAddress
{
    QUrl url; // wss://127.0.0.1:PORT
    QString pin;
};

class SessionLoad final : public QObject
{
    Q_OBJECT

public:
    // Session i redeems tokens[i] at hubs[i % hubs.size()].
    SessionLoad(QList<HubAddress> hubs, QStringList tokens);
    ~SessionLoad() override;

    // Starts every session, at most `inFlight` not yet welcomed at a time;
    // false when not all were live within `limit`.
    bool connectAll(int inFlight, std::chrono::milliseconds limit);
    // Runs the event loop until exactly `count` sessions are live (after
    // a hub stops: none; after it is back: all, as they return by
    // themselves).
    bool awaitLive(int count, std::chrono::milliseconds limit);

    int size() const { return static_cast<int>(m_clients.size()); }
    int liveCount() const { return static_cast<int>(m_live.size()); }
    // Stops and deletes every session.
    void clear();
    // Why the sessions lost their hub since the last call, and how many
    // each reason (as the daemons log it).
    QMap<QString, int> takeLossReasons() { return std::exchange(m_lossReasons, {}); }
    // From now on: when each session is welcomed, and why attempts that
    // never got a welcome failed (where a return's time goes).
    void markReturn();
    // Seconds from the mark until `fraction` of the sessions were back.
    double backAfter(double fraction) const;
    QMap<QString, int> takeAttemptFailures() { return std::exchange(m_attemptFailures, {}); }

private:
    void add(int index);

    QList<HubAddress> m_hubs;
    QStringList m_tokens;
    std::vector<std::unique_ptr<tunnel::TunnelClient>> m_clients;
    QSet<int> m_live;
    QElapsedTimer m_sinceMark;
    std::vector<qint64> m_welcomedAt; // ms after the mark, in order
    QMap<QString, int> m_attemptFailures;
    QMap<QString, int> m_lossReasons;
};

struct ProcessUse
{
    double rssMiB = 0;
    double cpuSeconds = 0;
};

// From /proc: resident memory now and CPU time so far.
ProcessUse useOf(qint64 pid);

} // namespace cloop::bench
