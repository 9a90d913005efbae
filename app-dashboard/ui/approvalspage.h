#pragma once

#include <QWidget>

class QPushButton;
class QTabWidget;

namespace cloop::dashboard {

class EventSubscription;
class ForwardersClient;
class HubApi;
class JsonListing;
class RecordTable;

// Approvals: the requests the signed-in user may decide (never their own),
// with Approve… and Deny…; their own requests, waiting or decided; and the
// history of every decided request they may see.
class ApprovalsPage final : public QWidget
{
    Q_OBJECT

public:
    ApprovalsPage(HubApi *api, EventSubscription *events, ForwardersClient *forwarders,
        QWidget *parent = nullptr);

    RecordTable *inbox() const { return m_inbox; }
    RecordTable *mine() const { return m_mine; }
    RecordTable *history() const { return m_history; }
    QPushButton *approveButton() const { return m_approve; }
    QPushButton *denyButton() const { return m_deny; }
    QTabWidget *tabs() const { return m_tabs; }
    int pendingCount() const;
    void refresh();

Q_SIGNALS:
    void pendingCountChanged(int count);
    void dialogOpened(QDialog *dialog);

private:
    void openApprove();
    void openDeny();

    ForwardersClient *m_forwarders;
    QList<JsonListing *> m_listings;
    RecordTable *m_inbox;
    RecordTable *m_mine;
    RecordTable *m_history;
    QPushButton *m_approve;
    QPushButton *m_deny;
    QTabWidget *m_tabs;
};

} // namespace cloop::dashboard
