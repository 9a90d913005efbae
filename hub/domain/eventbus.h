#pragma once

#include "common/api/hubeventname.h"

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <optional>

namespace cloop::hub {

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
};

// The hub's domain signals at one place: services publish, the event stream
// (and later the cluster bus) subscribe.
class EventBus final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EventBus)

public:
    using QObject::QObject;

    void publish(HubEvent event) { Q_EMIT published(event); }

Q_SIGNALS:
    void published(const cloop::hub::HubEvent &event);
};

} // namespace cloop::hub
