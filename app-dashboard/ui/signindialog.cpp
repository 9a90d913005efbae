#include "app-dashboard/ui/signindialog.h"

#include "app-dashboard/core/hubapi.h"
#include "common/net/spkipin.h"

#include <QFormLayout>
#include <QLineEdit>

namespace cloop::dashboard {

SignInDialog::SignInDialog(HubApi *api, QWidget *parent)
    : FormDialog(tr("Sign in to a cloop hub"), tr("Sign in"), parent),
      m_api(api),
      m_url(new QLineEdit(this)),
      m_pin(new QLineEdit(this)),
      m_token(new QLineEdit(this))
{
    m_url->setObjectName(QStringLiteral("url"));
    m_url->setPlaceholderText(QStringLiteral("wss://hub.example.org:8443"));
    m_pin->setObjectName(QStringLiteral("pin"));
    m_pin->setPlaceholderText(tr("sha256:… (cloop hub pin, on the hub)"));
    m_pin->setToolTip(tr("The fingerprint of the hub's key. It proves you reach your hub and not an impostor."));
    m_token->setObjectName(QStringLiteral("token"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("cat_… (cloop token create)"));
    auto *form = new QFormLayout;
    form->addRow(tr("&Hub:"), m_url);
    form->addRow(tr("Key &pin:"), m_pin);
    form->addRow(tr("&Token:"), m_token);
    setContent(form);
    setMinimumWidth(560);
    for (QLineEdit *edit : {m_url, m_pin, m_token})
        connect(edit, &QLineEdit::textChanged, this, &SignInDialog::revalidate);
    revalidate();
}

void SignInDialog::setHub(const QString &url, const QString &pin)
{
    m_url->setText(url);
    m_pin->setText(pin);
}

void SignInDialog::setToken(const QString &token)
{
    m_token->setText(token);
}

api::AdminEndpoint SignInDialog::endpoint() const
{
    auto pins = net::PinSet::parse(m_pin->text().trimmed());
    return api::AdminEndpoint{QUrl(m_url->text().trimmed()), m_token->text().trimmed(),
                              net::HubTrust(pins ? *pins : net::PinSet(), {}), tr("the dashboard")};
}

QString SignInDialog::problem() const
{
    const QUrl url(m_url->text().trimmed());
    if (m_url->text().trimmed().isEmpty())
        return tr("Where is the hub? Its address starts with wss://.");
    if (Status check = api::checkAdminUrl(url); !check)
        return check.error().message;
    if (!m_pin->text().trimmed().isEmpty()) {
        if (auto pins = net::PinSet::parse(m_pin->text().trimmed()); !pins)
            return pins.error().message;
    }
    if (m_token->text().trimmed().isEmpty())
        return tr("Paste your API token.");
    return {};
}

void SignInDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_api->setEndpoint(endpoint());
    m_api->get(QStringLiteral("/api/whoami"), context, std::move(done));
}

QString SignInDialog::refusalText(const Error &error) const
{
    return tr("Not signed in: %1").arg(error.message);
}

void SignInDialog::succeeded(const QJsonObject &answer)
{
    m_identity = answer;
    accept();
}

} // namespace cloop::dashboard
