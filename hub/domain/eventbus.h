#pragma once

#include "common/api/hubeventname.h"
#include "common/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace cloop::hub {

class Database;

// Something the dashboard shows as it happens. Events about a project's
// bindings and requests carry the project, events about one user's access
// carry the user, so the stream can send them only to the people who may
// see them.
struct HubEvent
{
    HubEvent() = default;
    HubEvent(QString eventName, QJsonObject eventData, std::optional<qint64> project = std::nullopt,
        QDateTime when = QDateTime::currentDateTimeUtc(), std::optional<qint64> user = std::nullopt)
        : name(std::move(eventName))
        , data(std::move(eventData))
        , projectId(project)
        , at(std::move(when))
        , userId(user)
    { }

    QString name; // "binding.created"
    QJsonObject data;
    std::optional<qint64> projectId;
    QDateTime at = QDateTime::currentDateTimeUtc();
    // Set: only this user and hub administrators may see it.
    std::optional<qint64> userId;
    // Empty for this member's own events; for another member's, its name.
    QString member;

    bool isFromAnotherMember() const { return !member.isEmpty(); }
};

// The hub's domain signals at one place: services publish, the event
// stream, the dispatcher and the cluster bus subscribe.
//
// A change and its event go together: publish() inside the change's
// transaction records the event for the other members of a cluster in that
// same transaction (the journal), and tells this member's subscribers once
// it commits, never when it rolls back. Events of other members arrive
// through deliver().
class EventBus final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EventBus)

public:
    // Records one of this member's events where the other members read
    // them; its failure fails the transaction the event was published in.
    using Journal = std::function<Status(const HubEvent &event)>;

    explicit EventBus(Database &database, QObject *parent = nullptr);

    void setJournal(Journal journal) { m_journal = std::move(journal); }
    bool hasJournal() const { return bool(m_journal); }

    void publish(HubEvent event);
    // Another member's event: told to the subscribers at once, recorded nowhere.
    void deliver(const HubEvent &event);

Q_SIGNALS:
    void published(const cloop::hub::HubEvent &event);

private:
    Database &m_database;
    Journal m_journal;
};

} // namespace cloop::hub
