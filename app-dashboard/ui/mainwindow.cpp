#include "app-dashboard/ui/mainwindow.h"

#include "app-dashboard/core/eventsubscription.h"
#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/ui/approvalspage.h"
#include "app-dashboard/ui/auditpage.h"
#include "app-dashboard/ui/executorspage.h"
#include "app-dashboard/ui/forwarderspage.h"
#include "app-dashboard/ui/plainlabel.h"
#include "app-dashboard/ui/projectspage.h"
#include "app-dashboard/ui/themedicon.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QProgressBar>
#include <QStackedWidget>
#include <QStatusBar>

namespace cloop::dashboard {

MainWindow::MainWindow(HubApi *api, const QJsonObject &identity, QWidget *parent)
    : QMainWindow(parent)
    , m_identity(api::recordIn<api::Identity>(identity).value_or(api::Identity {}))
    , m_events(new EventSubscription(this))
    , m_forwardersClient(new ForwardersClient(api, m_events, this))
    , m_navigation(new QListWidget(this))
    , m_pages(new QStackedWidget(this))
    , m_forwarders(new ForwardersPage(api, m_forwardersClient, this))
    , m_projects(new ProjectsPage(api, m_events, m_forwardersClient, m_identity, this))
    , m_approvals(new ApprovalsPage(api, m_events, m_forwardersClient, this))
    , m_executors(new ExecutorsPage(api, m_events, m_identity.hubAdmin, this))
    , m_live(new PlainLabel(this))
{
    setWindowTitle(tr("cloop dashboard — %1").arg(api->endpoint().url.host()));
    m_navigation->setObjectName(QStringLiteral("navigation"));
    m_navigation->addItem(
        new QListWidgetItem(themedIcon(QStringLiteral("forwarders"), m_navigation->palette()),
            tr("Device forwarders")));
    m_navigation->addItem(new QListWidgetItem(
        themedIcon(QStringLiteral("projects"), m_navigation->palette()), tr("Projects")));
    m_navigation->addItem(new QListWidgetItem(
        themedIcon(QStringLiteral("approvals"), m_navigation->palette()), tr("Approvals")));
    m_navigation->addItem(new QListWidgetItem(
        themedIcon(QStringLiteral("executors"), m_navigation->palette()), tr("Executors")));
    m_navigation->setIconSize(QSize(20, 20));
    m_navigation->setSpacing(2);
    m_pages->addWidget(m_forwarders);
    m_pages->addWidget(m_projects);
    m_pages->addWidget(m_approvals);
    m_pages->addWidget(m_executors);
    // The audit log is the hub administrators' alone.
    if (m_identity.hubAdmin) {
        m_audit = new AuditPage(api, this);
        m_navigation->addItem(new QListWidgetItem(
            themedIcon(QStringLiteral("audit"), m_navigation->palette()), tr("Audit log")));
        m_pages->addWidget(m_audit);
    }
    m_navigation->setCurrentRow(0);
    // As wide as its longest entry, "Approvals (12)" included; the pages
    // take the rest.
    m_navigation->setFixedWidth(m_navigation->sizeHintForColumn(0)
        + m_navigation->fontMetrics().horizontalAdvance(QStringLiteral(" (99)"))
        + 2 * m_navigation->frameWidth() + 4 * m_navigation->spacing());
    connect(m_approvals, &ApprovalsPage::pendingCountChanged, this, [this](int count) {
        m_navigation->item(Approvals)->setText(
            count > 0 ? tr("Approvals (%1)").arg(count) : tr("Approvals"));
    });
    auto *central = new QWidget(this);
    auto *columns = new QHBoxLayout(central);
    columns->addWidget(m_navigation);
    columns->addWidget(m_pages, 1);
    setCentralWidget(central);
    connect(m_navigation, &QListWidget::currentRowChanged, this, [this](int row) {
        m_pages->setCurrentIndex(row);
        // The audit log is read when looked at, not pushed.
        if (row == Audit && m_audit)
            m_audit->refresh();
    });

    QMenu *session = menuBar()->addMenu(tr("&Session"));
    session->addAction(
        tr("&Refresh"), QKeySequence::Refresh, m_forwardersClient, &ForwardersClient::refresh);
    session->addAction(tr("Sign &out"), this, &MainWindow::signOutRequested);
    session->addSeparator();
    session->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

    statusBar()->addWidget(new PlainLabel(m_identity.hubAdmin
            ? tr("Signed in as %1 (hub administrator)").arg(m_identity.user)
            : tr("Signed in as %1").arg(m_identity.user),
        this));
    m_live->setObjectName(QStringLiteral("live"));
    // Slow calls show as a moving bar, so a wait never looks like a hang.
    auto *busy = new QProgressBar(this);
    busy->setObjectName(QStringLiteral("busy"));
    busy->setRange(0, 0);
    busy->setMaximumWidth(120);
    busy->setMaximumHeight(12);
    busy->setTextVisible(false);
    busy->setVisible(api->pendingCalls() > 0);
    connect(api, &HubApi::busyChanged, busy, &QWidget::setVisible);
    statusBar()->addPermanentWidget(busy);
    statusBar()->addPermanentWidget(m_live);
    connect(
        m_events, &EventSubscription::stateChanged, this, [this](EventSubscription::State state) {
            switch (state) {
            case EventSubscription::State::Live:
                m_live->setText(tr("● live"));
                break;
            case EventSubscription::State::Connecting:
                m_live->setText(tr("reconnecting…"));
                break;
            case EventSubscription::State::Refused:
                m_live->setText(tr("not live: %1").arg(m_events->lastError()));
                break;
            case EventSubscription::State::Stopped:
                m_live->clear();
                break;
            }
        });
    resize(1024, 700);
    m_events->start(api->endpoint());
    m_forwardersClient->refresh();
    m_approvals->refresh();
}

MainWindow::~MainWindow() = default;

void MainWindow::showPage(Page page)
{
    m_navigation->setCurrentRow(page);
}

} // namespace cloop::dashboard
