#include "app-dashboard/core/jsonlisting.h"

#include "app-dashboard/core/eventsubscription.h"

namespace cloop::dashboard {

JsonListing::JsonListing(HubApi *api, QString key, JsonTableModel *model, QObject *parent)
    : QObject(parent)
    , m_api(api)
    , m_key(std::move(key))
    , m_model(model)
{ }

void JsonListing::setPath(const QString &path, const api::QueryItems &query)
{
    m_path = path;
    m_query = query;
}

void JsonListing::followEvents(EventSubscription *events, const QStringList &eventPrefixes)
{
    connect(events, &EventSubscription::subscribed, this, &JsonListing::refresh);
    connect(events, &EventSubscription::eventReceived, this,
        [this, eventPrefixes](const QString &event) {
            for (const QString &prefix : eventPrefixes) {
                if (event.startsWith(prefix)) {
                    refresh();
                    return;
                }
            }
        });
}

void JsonListing::refresh()
{
    if (m_path.isEmpty())
        return;
    // One load at a time; a burst of events becomes one more load after it.
    if (m_loading) {
        m_again = true;
        return;
    }
    m_loading = true;
    const QString path = m_path;
    const api::QueryItems query = m_query;
    m_api->get(
        m_path, this,
        [this, path, query](const Result<QJsonObject> &answer) {
            m_loading = false;
            // The list asked for changed meanwhile (another project chosen):
            // this answer is about the old one, and the new one is on its way.
            if (path != m_path || query != m_query) {
                m_again = false;
                refresh();
                return;
            }
            const QString error = answer ? QString() : answer.error().message;
            if (answer)
                m_model->setRecords(answer->value(m_key).toArray());
            if (error != m_lastError) {
                m_lastError = error;
                Q_EMIT errorChanged(error);
            }
            Q_EMIT loaded();
            if (m_again) {
                m_again = false;
                refresh();
            }
        },
        m_query);
}

} // namespace cloop::dashboard
