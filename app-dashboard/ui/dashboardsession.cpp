#include "app-dashboard/ui/dashboardsession.h"

#include "app-dashboard/core/tokenstore.h"
#include "app-dashboard/ui/mainwindow.h"
#include "app-dashboard/ui/signindialog.h"

#include <QLineEdit>
#include <QSettings>

namespace cloop::dashboard {

namespace {

const QString kHubKey = QStringLiteral("hub/url");
const QString kPinKey = QStringLiteral("hub/pin");

} // namespace

DashboardSession::DashboardSession(
    HubApi *api, TokenStore *tokens, QSettings *settings, QObject *parent)
    : QObject(parent)
    , m_api(api)
    , m_tokens(tokens)
    , m_settings(settings)
{ }

DashboardSession::~DashboardSession()
{
    delete m_window;
    delete m_dialog;
}

SignInDialog *DashboardSession::signInDialog() const
{
    return m_dialog;
}

MainWindow *DashboardSession::window() const
{
    return m_window;
}

void DashboardSession::start(const QString &token)
{
    auto *dialog = new SignInDialog(m_api, m_tokens);
    m_dialog = dialog;
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString hub = m_settings->value(kHubKey).toString();
    dialog->setHub(hub, m_settings->value(kPinKey).toString());
    dialog->setToken(token);
    if (token.isEmpty() && !hub.isEmpty() && m_tokens) {
        m_tokens->load(hub, dialog, [dialog](const Result<QString> &kept) {
            if (kept && dialog->tokenEdit()->text().isEmpty())
                dialog->setToken(*kept);
        });
    }
    connect(dialog, &QDialog::accepted, this, &DashboardSession::openWindow);
    dialog->show();
}

void DashboardSession::openWindow()
{
    m_hub = m_dialog->urlEdit()->text().trimmed();
    m_settings->setValue(kHubKey, m_hub);
    m_settings->setValue(kPinKey, m_dialog->pinEdit()->text().trimmed());
    auto *window = new MainWindow(m_api, m_dialog->identity());
    m_window = window;
    window->setAttribute(Qt::WA_DeleteOnClose);
    connect(window, &MainWindow::signOutRequested, this, &DashboardSession::signOut);
    window->show();
}

void DashboardSession::signOut()
{
    if (m_tokens && !m_hub.isEmpty())
        m_tokens->forget(m_hub, this, [](const Status &) {});
    // The dialog first, so closing the window is not closing the last one.
    start();
    if (m_window)
        m_window->close();
}

} // namespace cloop::dashboard
