#pragma once

#include <QObject>
#include <QPointer>

class QSettings;

namespace cloop::dashboard {

class HubApi;
class MainWindow;
class SignInDialog;
class TokenStore;

// From sign-in to sign-out: the sign-in dialog prefilled with the remembered
// hub and pin (and the token from the keyring, when it holds one), the
// window once the hub has said who signed in, and on Sign out the token
// forgotten and the dialog again. Closing the last of them ends the
// program, as Qt does by default.
class DashboardSession final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DashboardSession)

public:
    DashboardSession(
        HubApi *api, TokenStore *tokens, QSettings *settings, QObject *parent = nullptr);
    ~DashboardSession() override;

    // `token` (from the environment) fills the dialog for this start only.
    void start(const QString &token = {});
    void signOut();

    SignInDialog *signInDialog() const;
    MainWindow *window() const;

private:
    void openWindow();

    HubApi *m_api;
    TokenStore *m_tokens;
    QSettings *m_settings;
    QPointer<SignInDialog> m_dialog;
    QPointer<MainWindow> m_window;
    QString m_hub;
};

} // namespace cloop::dashboard
