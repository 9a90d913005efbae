#include "app-dashboard/ui/upgradedialog.h"

#include "app-dashboard/ui/plainlabel.h"

#include <QLineEdit>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace cloop::dashboard {

UpgradeDialog::UpgradeDialog(HubApi *api, const api::Executor &executor, QWidget *parent)
    : FormDialog(tr("Upgrade %1").arg(executor.name), tr("Upgrade"), parent)
    , m_api(api)
    , m_id(executor.id)
    , m_target(new QLineEdit(QStringLiteral("latest"), this))
{
    QString what = tr("%1 runs %2 on the %3 channel.")
                       .arg(executor.name,
                           executor.version.isEmpty() ? tr("an unknown version") : executor.version,
                           executor.channel.isEmpty() ? tr("stable") : executor.channel);
    if (!executor.offeredVersion.isEmpty())
        what += QLatin1Char(' ') + tr("The hub offers %1.").arg(executor.offeredVersion);
    what += QLatin1Char(' ')
        + tr("Its runs finish first; then its device installs the release through its root "
             "helper, and rolls back by itself if the new version does not come back.");
    auto *label = new PlainLabel(what, this);
    label->setWordWrap(true);
    m_target->setObjectName(QStringLiteral("target"));
    m_target->setPlaceholderText(tr("latest, a release such as 0.4.0, or edge:COMMIT"));
    auto *content = new QVBoxLayout;
    content->addWidget(label);
    content->addWidget(m_target);
    setContent(content);
    setFormWidth(480);
    connect(m_target, &QLineEdit::textChanged, this, &UpgradeDialog::revalidate);
    revalidate();
}

QString UpgradeDialog::problem() const
{
    static const QRegularExpression shape(QStringLiteral(
        "\\A(latest|[0-9]{1,5}\\.[0-9]{1,5}\\.[0-9]{1,5}|edge:[0-9a-fA-F]{7,40})\\z"));
    return shape.match(m_target->text().trimmed()).hasMatch()
        ? QString()
        : tr("Give latest, a release such as 0.4.0, or edge: and 7 to 40 hex digits.");
}

void UpgradeDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_api->post(QStringLiteral("/api/executors/%1/upgrade").arg(m_id),
        QJsonObject { { QStringLiteral("target"), m_target->text().trimmed() } }, context,
        std::move(done));
}

void UpgradeDialog::succeeded(const QJsonObject &answer)
{
    const int draining = answer.value(QLatin1String("draining")).toInt();
    messageLabel()->setText(draining > 0
            ? tr("Accepted: it finishes its %n run(s) first, then upgrades.", nullptr, draining)
            : tr("Accepted: its root helper is installing it now."));
    settle(tr("Close"));
}

QString describeSoftware(const api::EnrolledDaemon &daemon)
{
    if (daemon.version.isEmpty())
        return {};
    QStringList parts { daemon.version };
    if (daemon.channel == QLatin1String("edge"))
        parts.append(UpgradeDialog::tr("edge"));
    const QString last = daemon.upgrade.value(QLatin1String("state")).toString();
    if (daemon.upgrading)
        parts.append(UpgradeDialog::tr("upgrading to %1")
                         .arg(daemon.upgrade.value(QLatin1String("target")).toString()));
    else if (last == QLatin1String("rolled_back"))
        parts.append(UpgradeDialog::tr("upgrade rolled back"));
    else if (last == QLatin1String("failed") || last == QLatin1String("refused"))
        parts.append(UpgradeDialog::tr("upgrade %1").arg(last));
    if (!daemon.upgrading && !daemon.offeredVersion.isEmpty())
        parts.append(UpgradeDialog::tr("%1 offered").arg(daemon.offeredVersion));
    return parts.join(QStringLiteral(" · "));
}

} // namespace cloop::dashboard
