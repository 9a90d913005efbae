#include "hub/domain/eventbus.h"

#include "common/logging.h"
#include "hub/storage/database.h"

namespace cloop::hub {

EventBus::EventBus(Database &database, QObject *parent)
    : QObject(parent)
    , m_database(database)
{ }

void EventBus::publish(HubEvent event)
{
    if (m_journal) {
        // Inside a change's transaction a failure here fails the change: the
        // other members never miss what this one did. Outside one (a
        // session that came or went) the event is this member's news only.
        if (Status recorded = m_journal(event); !recorded)
            qCWarning(lcHubCluster).noquote() << "cannot tell the other members of" << event.name
                                              << "-" << recorded.error().message;
    }
    m_database.afterCommit([this, event = std::move(event)] { Q_EMIT published(event); });
}

void EventBus::deliver(const HubEvent &event)
{
    Q_EMIT published(event);
}

} // namespace cloop::hub
