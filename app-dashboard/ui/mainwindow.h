#pragma once

#include "common/api/adminrequest.h"
#include "common/api/identity.h"

#include <QJsonObject>
#include <QMainWindow>

class QLabel;
class QListWidget;
class QStackedWidget;

namespace cloop::dashboard {

class ApprovalsPage;
class AuditPage;
class EventSubscription;
class ExecutorsPage;
class ForwardersClient;
class ForwardersPage;
class HubApi;
class ProjectsPage;

// The signed-in window: navigation on the left, the chosen screen on the
// right, who is signed in and whether the view is live in the status bar.
class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    // `identity` is the hub's answer to GET /api/whoami.
    MainWindow(HubApi *api, const QJsonObject &identity, QWidget *parent = nullptr);
    ~MainWindow() override;

    enum Page
    {
        Forwarders,
        Projects,
        Approvals,
        Executors,
        Audit
    };

    ForwardersPage *forwardersPage() const { return m_forwarders; }
    ProjectsPage *projectsPage() const { return m_projects; }
    ApprovalsPage *approvalsPage() const { return m_approvals; }
    ExecutorsPage *executorsPage() const { return m_executors; }
    // Null for a user who is not a hub administrator.
    AuditPage *auditPage() const { return m_audit; }
    QListWidget *navigation() const { return m_navigation; }
    void showPage(Page page);
    ForwardersClient *forwardersClient() const { return m_forwardersClient; }
    QLabel *liveLabel() const { return m_live; }

Q_SIGNALS:
    void signOutRequested();

private:
    api::Identity m_identity; // who signed in, from GET /api/whoami
    EventSubscription *m_events;
    ForwardersClient *m_forwardersClient;
    QListWidget *m_navigation;
    QStackedWidget *m_pages;
    ForwardersPage *m_forwarders;
    ProjectsPage *m_projects;
    ApprovalsPage *m_approvals;
    ExecutorsPage *m_executors;
    AuditPage *m_audit = nullptr;
    QLabel *m_live;
};

} // namespace cloop::dashboard
