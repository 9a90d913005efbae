#pragma once

#include "common/result.h"
#include "hub/domain/eventbus.h"

#include <QObject>
#include <QTimer>

#include <chrono>
#include <memory>

namespace cloop {
class Clock;
}

namespace cloop::hub {

class ClusterEventStore;
class MemberLease;
class NotificationListener;

// The cluster bus: this member's events go into the shared events table in
// the transaction of their change (the EventBus's journal), and the other
// members' events come out of it in their order, onto this member's
// EventBus. A notification wakes the reader at once; a poll every few
// hundred milliseconds reads anyway, so a notification lost with a
// connection costs one poll, never an event. After the records failed to
// answer, the reader continues from the last event it applied and asks for
// a resynchronisation: what this member holds is checked against the
// records again, whatever was or was not missed.
class ClusterBus final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ClusterBus)

public:
    struct Options
    {
        std::chrono::milliseconds poll { 250 };
        // Events are kept this long for members that fall behind.
        std::chrono::milliseconds retention { 10 * 60'000 };
        std::chrono::milliseconds pruneEvery { 60'000 };
        // How often the listening connection is checked (the driver never
        // notices a dropped one by itself).
        std::chrono::milliseconds listenerCheck { 5'000 };
        // Events applied in one go before the event loop gets a turn.
        int batch = 500;
    };

    // `listener` may be null: the poll alone then carries the events.
    ClusterBus(ClusterEventStore &store, EventBus &events, const MemberLease &lease,
        const Clock &clock, std::unique_ptr<NotificationListener> listener, Options options,
        QObject *parent = nullptr);
    ~ClusterBus() override;

    // This member's events go to the others from now on, and theirs are
    // applied from the newest one recorded now.
    Status start();
    qint64 applied() const { return m_applied; }
    // How many other members' events were applied since the start.
    quint64 delivered() const { return m_delivered; }

    // Applies whatever is new now (also on every poll and notification).
    void readNew();

Q_SIGNALS:
    // Events may have been missed (the records did not answer for a while,
    // or pruned events this member had not applied): everything it holds
    // must be checked against the records.
    void resynchronise(const QString &why);

private:
    Status record(const HubEvent &event);
    void scheduleRead();
    void noteFailure(const Error &error);
    void checkListener();
    void prune();

    ClusterEventStore &m_store;
    EventBus &m_events;
    const MemberLease &m_lease;
    const Clock &m_clock;
    std::unique_ptr<NotificationListener> m_listener;
    Options m_options;
    qint64 m_applied = 0;
    quint64 m_delivered = 0;
    bool m_failing = false;
    bool m_readScheduled = false;
    bool m_reading = false;
    QTimer m_poll;
    QTimer m_listenerCheck;
    QTimer m_prune;
};

} // namespace cloop::hub
