#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <optional>

namespace cloop::hub {

// Something the dashboard shows as it happens. Events about a project's
// bindings and requests carry the project, so the stream can send them only
// to the people who may see them.
struct HubEvent
{
    QString name; // "binding.created"
    QJsonObject data;
    std::optional<qint64> projectId;
    QDateTime at = QDateTime::currentDateTimeUtc();
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
