#include "app-dashboard/ui/signindialog.h"

#include "common/api/identity.h"

#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/tokenstore.h"
#include "app-dashboard/ui/plainlabel.h"
#include "common/net/keyprobe.h"
#include "common/net/spkipin.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

SignInDialog::SignInDialog(HubApi *api, TokenStore *tokens, QWidget *parent)
    : FormDialog(tr("Sign in to a cloop hub"), tr("Sign in"), parent)
    , m_api(api)
    , m_tokens(tokens)
    , m_probe(new net::KeyProbe(this))
    , m_url(new QLineEdit(this))
    , m_pin(new QLineEdit(this))
    , m_token(new QLineEdit(this))
    , m_remember(new QCheckBox(tr("&Keep the token in this desktop's keyring"), this))
    , m_keyPanel(new QWidget(this))
    , m_keyPin(new PlainLabel(this))
{
    m_url->setObjectName(QStringLiteral("url"));
    m_url->setPlaceholderText(QStringLiteral("wss://hub.example.org:8443"));
    m_pin->setObjectName(QStringLiteral("pin"));
    m_pin->setPlaceholderText(tr("empty: read it from the hub first"));
    m_pin->setToolTip(
        tr("The fingerprint of the hub's key. It proves you reach your hub and not an impostor."));
    m_token->setObjectName(QStringLiteral("token"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("cat_… (cloop token create)"));
    auto *form = new QFormLayout;
    form->addRow(tr("&Hub:"), m_url);
    form->addRow(tr("Key &pin:"), m_pin);
    form->addRow(tr("&Token:"), m_token);
    form->addRow(QString(), m_remember);
    m_remember->setObjectName(QStringLiteral("remember"));
    m_remember->setChecked(tokens != nullptr);
    m_remember->setVisible(tokens != nullptr);

    m_keyPanel->setObjectName(QStringLiteral("key"));
    m_keyPin->setObjectName(QStringLiteral("keyPin"));
    QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    fixed.setPointSizeF(m_keyPin->font().pointSizeF() * 1.1);
    m_keyPin->setFont(fixed);
    m_keyPin->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *presents = new PlainLabel(tr("The hub presents this key:"), m_keyPanel);
    auto *compare = new PlainLabel(
        tr("Compare it with what cloop hub pin prints on the hub, or with what its "
           "administrator gave you. Sign in only if they are the same."),
        m_keyPanel);
    compare->setWordWrap(true);
    auto *keyLayout = new QVBoxLayout(m_keyPanel);
    keyLayout->setContentsMargins(0, 0, 0, 0);
    keyLayout->addWidget(presents);
    keyLayout->addWidget(m_keyPin);
    keyLayout->addWidget(compare);
    m_keyPanel->setVisible(false);
    form->addRow(m_keyPanel);
    setContent(form);
    setFormWidth(560);
    for (QLineEdit *edit : { m_url, m_pin, m_token }) {
        connect(edit, &QLineEdit::textChanged, this, &SignInDialog::revalidate);
        connect(edit, &QLineEdit::textChanged, this, &SignInDialog::updateAction);
    }
    revalidate();
    updateAction();
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
    return api::AdminEndpoint { QUrl(m_url->text().trimmed()), m_token->text().trimmed(),
        net::HubTrust(pins ? *pins : net::PinSet(), {}), tr("the dashboard") };
}

bool SignInDialog::needsKeyCheck() const
{
    return m_pin->text().trimmed().isEmpty();
}

void SignInDialog::updateAction()
{
    // The key shown is the key in the field, or it is no longer shown.
    const bool comparing = !m_presentedPin.isEmpty() && m_pin->text().trimmed() == m_presentedPin;
    m_keyPanel->setVisible(comparing);
    if (QPushButton *action = actionButton())
        action->setText(needsKeyCheck() ? tr("&Read the hub's key")
                : comparing             ? tr("&Trust this key and sign in")
                                        : tr("Sign in"));
}

QString groupedPin(const QString &pin)
{
    const qsizetype colon = pin.indexOf(QLatin1Char(':'));
    const QString digest = pin.mid(colon + 1);
    QStringList groups;
    for (qsizetype at = 0; at < digest.size(); at += 4)
        groups.append(digest.mid(at, 4));
    return pin.left(colon + 1) + groups.join(QLatin1Char(' '));
}

QString SignInDialog::problem() const
{
    const QUrl url(m_url->text().trimmed());
    if (m_url->text().trimmed().isEmpty())
        return tr("Where is the hub? Its address starts with wss://.");
    if (Status check = api::checkAdminUrl(url); !check)
        return check.error().message;
    if (!needsKeyCheck()) {
        if (auto pins = net::PinSet::parse(m_pin->text().trimmed()); !pins)
            return pins.error().message;
    }
    if (m_token->text().trimmed().isEmpty())
        return tr("Paste your API token.");
    return {};
}

QString SignInDialog::busyText() const
{
    return needsKeyCheck() ? tr("Reading the key the hub presents…") : tr("Asking the hub…");
}

void SignInDialog::carryOut(QObject *context, HubApi::Callback done)
{
    if (needsKeyCheck()) {
        m_probe->probe(QUrl(m_url->text().trimmed()), context,
            [done = std::move(done)](const Result<QString> &pin) {
                if (pin)
                    done(QJsonObject { { QStringLiteral("pin"), *pin } });
                else
                    done(pin.error());
            });
        return;
    }
    m_api->setEndpoint(endpoint());
    m_api->get(QStringLiteral("/api/whoami"), context, std::move(done));
}

QString SignInDialog::refusalText(const Error &error) const
{
    return tr("Not signed in: %1").arg(error.message);
}

void SignInDialog::succeeded(const QJsonObject &answer)
{
    if (needsKeyCheck()) {
        // Shown, not yet trusted: the person compares it, then signs in.
        m_presentedPin = answer.value(QLatin1String("pin")).toString();
        m_keyPin->setText(groupedPin(m_presentedPin));
        m_pin->setText(m_presentedPin);
        messageLabel()->clear();
        updateAction();
        return;
    }
    m_identity = answer;
    if (!m_tokens || !m_remember->isChecked()) {
        accept();
        return;
    }
    actionButton()->setEnabled(false);
    m_tokens->save(
        m_url->text().trimmed(), m_token->text().trimmed(), this, [this](const Status &kept) {
            actionButton()->setEnabled(true);
            if (kept) {
                accept();
                return;
            }
            // Never silently: the person learns the token was not kept, and why.
            settle(tr("Continue"));
            messageLabel()->setText(tr(
                "Signed in as %1. The token was not kept: %2. You will be asked for it next time.")
                                        .arg(api::recordIn<api::Identity>(m_identity)
                                                 .value_or(api::Identity {})
                                                 .user,
                                            kept.error().message));
        });
}

} // namespace cloop::dashboard
