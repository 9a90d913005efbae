#pragma once

#include "app-dashboard/ui/formdialog.h"
#include "common/api/adminrequest.h"

class QCheckBox;
class QLineEdit;

namespace cloop::net {
class KeyProbe;
} // namespace cloop::net

namespace cloop::dashboard {

class TokenStore;

// Sign in: the hub's address, its key pin and an API token. Without a pin
// the first step reads the key the hub presents and shows its pin to be
// compared with `cloop hub pin`; no token leaves before the pin is set.
// Then the dialog asks the hub who the token belongs to, and keeps the
// token in the desktop's keyring when asked to, saying so when it cannot.
class SignInDialog final : public FormDialog
{
    Q_OBJECT

public:
    // `tokens` may be null: then nothing is offered to be remembered.
    SignInDialog(HubApi *api, TokenStore *tokens, QWidget *parent = nullptr);

    void setHub(const QString &url, const QString &pin);
    void setToken(const QString &token);
    // After acceptance: who signed in (GET /api/whoami's answer).
    QJsonObject identity() const { return m_identity; }
    api::AdminEndpoint endpoint() const;
    QString problem() const override;
    // Empty while the pin is set: the next step signs in.
    bool needsKeyCheck() const;

    QLineEdit *urlEdit() const { return m_url; }
    QLineEdit *pinEdit() const { return m_pin; }
    QLineEdit *tokenEdit() const { return m_token; }
    QCheckBox *rememberBox() const { return m_remember; }

protected:
    QString busyText() const override;
    void carryOut(QObject *context, HubApi::Callback done) override;
    QString refusalText(const Error &error) const override;
    void succeeded(const QJsonObject &answer) override;

private:
    void updateAction();

    HubApi *m_api;
    TokenStore *m_tokens;
    net::KeyProbe *m_probe;
    QLineEdit *m_url;
    QLineEdit *m_pin;
    QLineEdit *m_token;
    QCheckBox *m_remember;
    QJsonObject m_identity;
};

} // namespace cloop::dashboard
