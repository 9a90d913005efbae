#pragma once

#include <QWidget>

class QDialog;
class QPushButton;

namespace cloop::api {
struct Executor;
}

namespace cloop::dashboard {

class EventSubscription;
class HubApi;
class UpgradeDialog;
class JsonListing;
class RecordTable;

// Executors: the agents, with version (and how far behind the hub's
// releases), protocol, what they can do and whether they are connected,
// live from the event stream. Hub administrators upgrade one from here.
class ExecutorsPage final : public QWidget
{
    Q_OBJECT

public:
    // `mayUpgrade`: the signed-in user is a hub administrator.
    ExecutorsPage(
        HubApi *api, EventSubscription *events, bool mayUpgrade, QWidget *parent = nullptr);

    RecordTable *table() const { return m_table; }
    JsonListing *listing() const { return m_listing; }
    QPushButton *upgradeButton() const { return m_upgrade; }

Q_SIGNALS:
    void dialogOpened(QDialog *dialog);

private:
    void openUpgrade();

    HubApi *m_api;
    JsonListing *m_listing;
    RecordTable *m_table;
    QPushButton *m_upgrade = nullptr;
};

// "linux/x86_64 · 2 CPUs · container · segments: yes · USB: no (vhci_hcd missing)".
QString describeCapabilities(const api::Executor &executor);

} // namespace cloop::dashboard
