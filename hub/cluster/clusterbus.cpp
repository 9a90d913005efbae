#include "hub/cluster/clusterbus.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/cluster/memberlease.h"
#include "hub/storage/clustereventstore.h"
#include "hub/storage/notificationlistener.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

ClusterBus::ClusterBus(ClusterEventStore &store, EventBus &events, const MemberLease &lease,
    const Clock &clock, std::unique_ptr<NotificationListener> listener, Options options,
    QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
    , m_lease(lease)
    , m_clock(clock)
    , m_listener(std::move(listener))
    , m_options(options)
{
    m_poll.setInterval(m_options.poll);
    connect(&m_poll, &QTimer::timeout, this, &ClusterBus::readNew);
    m_listenerCheck.setInterval(m_options.listenerCheck);
    connect(&m_listenerCheck, &QTimer::timeout, this, &ClusterBus::checkListener);
    m_prune.setInterval(m_options.pruneEvery);
    connect(&m_prune, &QTimer::timeout, this, &ClusterBus::prune);
    if (m_listener)
        connect(m_listener.get(), &NotificationListener::notified, this, &ClusterBus::scheduleRead);
}

ClusterBus::~ClusterBus()
{
    m_events.setJournal({});
}

Status ClusterBus::start()
{
    auto last = m_store.lastSequence();
    if (!last)
        return last.error();
    m_applied = *last;
    m_events.setJournal([this](const HubEvent &event) { return record(event); });
    m_poll.start();
    m_prune.start();
    if (m_listener)
        m_listenerCheck.start();
    qCInfo(lcHubCluster).noquote()
        << u"cluster bus: applying events after %1, polling every %2 ms%3"_s.arg(
               QString::number(m_applied), QString::number(m_options.poll.count()),
               m_listener ? u" and woken by notifications"_s : QString());
    return {};
}

Status ClusterBus::record(const HubEvent &event)
{
    const MemberRecord &member = m_lease.record();
    ClusterEventRecord row;
    row.at = event.at;
    row.memberId = member.id;
    row.memberGeneration = member.generation;
    row.memberName = member.name;
    row.name = event.name;
    row.data = event.data;
    row.projectId = event.projectId;
    row.userId = event.userId;
    return m_store.append(row);
}

void ClusterBus::scheduleRead()
{
    if (std::exchange(m_readScheduled, true))
        return;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_readScheduled = false;
            readNew();
        },
        Qt::QueuedConnection);
}

void ClusterBus::readNew()
{
    // A subscriber may publish, and publishing may read again; once is enough.
    if (m_reading)
        return;
    m_reading = true;
    auto events = m_store.after(m_applied, m_options.batch);
    if (!events) {
        m_reading = false;
        noteFailure(events.error());
        return;
    }
    if (m_failing) {
        m_failing = false;
        QString why = u"the records answer again"_s;
        if (auto first = m_store.firstSequence(); first && *first > m_applied + 1)
            why += u"; events %1 to %2 were pruned before this member applied them"_s.arg(
                QString::number(m_applied + 1), QString::number(*first - 1));
        qCInfo(lcHubCluster).noquote() << "cluster bus:" << why << "- resynchronising";
        if (m_listener && !m_listener->isListening()) {
            if (Status reopened = m_listener->reopen(); !reopened)
                qCWarning(lcHubCluster).noquote() << reopened.error().message;
        }
        Q_EMIT resynchronise(why);
    }
    const MemberRecord &self = m_lease.record();
    for (const ClusterEventRecord &row : std::as_const(*events)) {
        m_applied = row.sequence;
        if (row.memberId == self.id && row.memberGeneration == self.generation)
            continue;
        HubEvent event(row.name, row.data, row.projectId, row.at, row.userId);
        event.member = row.memberName;
        ++m_delivered;
        m_events.deliver(event);
    }
    m_reading = false;
    // A full batch: more are waiting, after the event loop had its turn.
    if (events->size() >= m_options.batch)
        scheduleRead();
}

void ClusterBus::noteFailure(const Error &error)
{
    if (std::exchange(m_failing, true))
        return;
    qCWarning(lcHubCluster).noquote()
        << "cluster bus: cannot read the cluster's events:" << error.message;
}

void ClusterBus::checkListener()
{
    if (!m_listener)
        return;
    if (m_listener->isListening()) {
        if (Status alive = m_listener->check(); alive)
            return;
        else
            qCWarning(lcHubCluster).noquote() << alive.error().message;
    }
    if (Status reopened = m_listener->reopen(); !reopened) {
        qCDebug(lcHubCluster).noquote() << reopened.error().message;
        return;
    }
    qCInfo(lcHubCluster) << "cluster bus: listening for notifications again";
    // What was notified while it was down is read now.
    scheduleRead();
}

void ClusterBus::prune()
{
    const QDateTime before = m_clock.now().addMSecs(-m_options.retention.count());
    auto removed = m_store.pruneBefore(before);
    if (!removed)
        qCDebug(lcHubCluster).noquote()
            << "cannot prune the cluster's events:" << removed.error().message;
    else if (*removed > 0)
        qCDebug(lcHubCluster) << "pruned" << *removed << "cluster events";
}

} // namespace cloop::hub
