#pragma once

#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/jsontablemodel.h"

#include <QObject>

namespace cloop::dashboard {

class EventSubscription;

// Keeps a JsonTableModel filled from one GET of the admin API (the list
// under `key` in its answer), reloading when asked, when the event stream
// (re)subscribes, and when an event whose name starts with one of
// `eventPrefixes` arrives.
class JsonListing final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JsonListing)

public:
    JsonListing(HubApi *api, QString key, JsonTableModel *model, QObject *parent = nullptr);

    // A new path's list replaces the old one's; an answer still on its way
    // for the old path is dropped.
    void setPath(const QString &path, const api::QueryItems &query = {});
    void followEvents(EventSubscription *events, const QStringList &eventPrefixes);
    void refresh();

    JsonTableModel *model() const { return m_model; }
    bool isLoading() const { return m_loading; }
    QString lastError() const { return m_lastError; }

Q_SIGNALS:
    void loaded();
    void errorChanged(const QString &error);

private:
    HubApi *m_api;
    QString m_key;
    JsonTableModel *m_model;
    QString m_path;
    api::QueryItems m_query;
    bool m_loading = false;
    bool m_again = false;
    QString m_lastError;
};

} // namespace cloop::dashboard
