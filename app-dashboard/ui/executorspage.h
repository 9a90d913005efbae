#pragma once

#include <QWidget>

namespace cloop::api {
struct Executor;
}

namespace cloop::dashboard {

class EventSubscription;
class HubApi;
class JsonListing;
class RecordTable;

// Executors: the agents, with version, protocol, what they can do and
// whether they are connected, live from the event stream.
class ExecutorsPage final : public QWidget
{
    Q_OBJECT

public:
    ExecutorsPage(HubApi *api, EventSubscription *events, QWidget *parent = nullptr);

    RecordTable *table() const { return m_table; }
    JsonListing *listing() const { return m_listing; }

private:
    JsonListing *m_listing;
    RecordTable *m_table;
};

// "linux/x86_64 · 2 CPUs · container · segments: yes · USB: no (vhci_hcd missing)".
QString describeCapabilities(const api::Executor &executor);

} // namespace cloop::dashboard
