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
// live from the event stream. Hub administrators enroll, re-issue the
// command of one that never redeemed it, revoke and upgrade from here.
class ExecutorsPage final : public QWidget
{
    Q_OBJECT

public:
    // `mayUpgrade`: the signed-in user is a hub administrator (who also
    // enrolls and revokes).
    ExecutorsPage(
        HubApi *api, EventSubscription *events, bool mayUpgrade, QWidget *parent = nullptr);

    RecordTable *table() const { return m_table; }
    JsonListing *listing() const { return m_listing; }
    QPushButton *upgradeButton() const { return m_upgrade; }
    QPushButton *enrollButton() const { return m_enroll; }
    QPushButton *reenrollButton() const { return m_reenroll; }
    QPushButton *revokeButton() const { return m_revoke; }

Q_SIGNALS:
    void dialogOpened(QDialog *dialog);

private:
    void openUpgrade();
    void openEnroll();
    void openReenroll();
    void openRevoke();
    // Enables what the selected executor allows, saying why not otherwise.
    void updateActions();

    HubApi *m_api;
    JsonListing *m_listing;
    RecordTable *m_table;
    QPushButton *m_upgrade = nullptr;
    QPushButton *m_enroll = nullptr;
    QPushButton *m_reenroll = nullptr;
    QPushButton *m_revoke = nullptr;
};

// "linux/x86_64 · 2 CPUs · container · segments: yes · USB: no (vhci_hcd missing)".
QString describeCapabilities(const api::Executor &executor);

} // namespace cloop::dashboard
