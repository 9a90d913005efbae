#pragma once

#include "app-dashboard/ui/formdialog.h"
#include "common/api/adminrequest.h"

class QCheckBox;
class QLabel;
class QLineEdit;

namespace cloop::net {
class KeyProbe;
} // namespace cloop::net

namespace cloop::dashboard {

class TokenStore;

// Sign in: the hub's address, its key pin and an API token. With the pin
// known it is one step. Without it, the first step reads the key the hub
// presents and shows its pin in groups, to be compared with what
// `cloop hub pin` prints, and the next trusts it and signs in, as ssh asks
// about a host key; no token leaves before the pin is set. Then the dialog
// asks the hub who the token belongs to, and keeps the token in the
// desktop's keyring when asked to, saying so when it cannot.
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
    // The key the hub presented, shown for comparison; hidden until read.
    QWidget *keyPanel() const { return m_keyPanel; }
    QLabel *keyPinLabel() const { return m_keyPin; }

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
    QWidget *m_keyPanel;
    QLabel *m_keyPin;
    // The pin read from the hub, while it is the one in the pin field.
    QString m_presentedPin;
    QJsonObject m_identity;
};

// "sha256:sCGX zLP9 ERCF …": a pin in groups of four, as people compare
// it, character by character.
QString groupedPin(const QString &pin);

} // namespace cloop::dashboard
