#pragma once

#include "app-dashboard/ui/formdialog.h"
#include "common/api/adminrequest.h"

class QLineEdit;

namespace cloop::dashboard {

// Sign in: the hub's address, its key pin (remembered once confirmed) and an
// API token. The dialog asks the hub who the token belongs to.
class SignInDialog final : public FormDialog
{
    Q_OBJECT

public:
    explicit SignInDialog(HubApi *api, QWidget *parent = nullptr);

    void setHub(const QString &url, const QString &pin);
    void setToken(const QString &token);
    // After acceptance: who signed in (GET /api/whoami's answer).
    QJsonObject identity() const { return m_identity; }
    api::AdminEndpoint endpoint() const;
    QString problem() const override;

    QLineEdit *urlEdit() const { return m_url; }
    QLineEdit *pinEdit() const { return m_pin; }
    QLineEdit *tokenEdit() const { return m_token; }

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;
    QString refusalText(const Error &error) const override;
    void succeeded(const QJsonObject &answer) override;

private:

    HubApi *m_api;
    QLineEdit *m_url;
    QLineEdit *m_pin;
    QLineEdit *m_token;
    QJsonObject m_identity;
};

} // namespace cloop::dashboard
