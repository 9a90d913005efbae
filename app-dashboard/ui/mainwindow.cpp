#include "app-dashboard/ui/mainwindow.h"

#include "app-dashboard/core/eventstream.h"
#include "app-dashboard/core/forwarderdirectory.h"
#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/ui/forwarderspage.h"

#include <QApplication>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>

namespace cloop::dashboard {

MainWindow::MainWindow(HubApi *api, const QJsonObject &identity, QWidget *parent)
    : QMainWindow(parent),
      m_api(api),
      m_events(new EventStream(this)),
      m_directory(new ForwarderDirectory(api, m_events, this)),
      m_navigation(new QListWidget(this)),
      m_pages(new QStackedWidget(this)),
      m_forwarders(new ForwardersPage(api, m_directory, this)),
      m_live(new QLabel(this))
{
    setWindowTitle(tr("cloop dashboard — %1").arg(api->endpoint().url.host()));
    m_navigation->setObjectName(QStringLiteral("navigation"));
    m_navigation->addItem(tr("Device forwarders"));
    m_navigation->setCurrentRow(0);
    m_navigation->setMaximumWidth(240);
    m_pages->addWidget(m_forwarders);
    auto *split = new QSplitter(this);
    split->addWidget(m_navigation);
    split->addWidget(m_pages);
    split->setStretchFactor(1, 1);
    setCentralWidget(split);
    connect(m_navigation, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);

    QMenu *session = menuBar()->addMenu(tr("&Session"));
    session->addAction(tr("&Refresh"), QKeySequence::Refresh, m_directory, &ForwarderDirectory::refresh);
    session->addAction(tr("Sign &out"), this, &MainWindow::signOutRequested);
    session->addSeparator();
    session->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

    const QString user = identity.value(QLatin1String("user")).toString();
    const bool admin = identity.value(QLatin1String("hub_admin")).toBool();
    statusBar()->addWidget(new QLabel(admin ? tr("Signed in as %1 (hub administrator)").arg(user)
                                            : tr("Signed in as %1").arg(user),
                                      this));
    m_live->setObjectName(QStringLiteral("live"));
    statusBar()->addPermanentWidget(m_live);
    connect(m_events, &EventStream::stateChanged, this, [this](EventStream::State state) {
        switch (state) {
        case EventStream::State::Live:
            m_live->setText(tr("● live"));
            break;
        case EventStream::State::Connecting:
            m_live->setText(tr("reconnecting…"));
            break;
        case EventStream::State::Refused:
            m_live->setText(tr("not live: %1").arg(m_events->lastError()));
            break;
        case EventStream::State::Stopped:
            m_live->clear();
            break;
        }
    });
    resize(1024, 700);
    m_events->start(api->endpoint());
    m_directory->refresh();
}

MainWindow::~MainWindow() = default;

} // namespace cloop::dashboard
