#include "app-dashboard/ui/executorspage.h"

#include "common/api/executor.h"
#include "common/api/hubeventname.h"

#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/core/timewords.h"
#include "app-dashboard/ui/allowaction.h"
#include "app-dashboard/ui/executorenrolldialog.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"
#include "app-dashboard/ui/upgradedialog.h"

#include <QJsonObject>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

QString describeCapabilities(const api::Executor &executor)
{
    if (executor.reportedCapabilities.isEmpty())
        return ExecutorsPage::tr("not reported yet");
    const auto capabilities = executor.capabilities();
    if (!capabilities)
        return capabilities.error().message;
    const auto verdict = [](const protocol::AgentCapabilities::Verdict &answer,
                             const QString &what) {
        if (answer.yes)
            return ExecutorsPage::tr("%1: yes").arg(what);
        return answer.reason.isEmpty() ? ExecutorsPage::tr("%1: no").arg(what)
                                       : ExecutorsPage::tr("%1: no (%2)").arg(what, answer.reason);
    };
    return QStringList { QStringLiteral("%1/%2").arg(capabilities->os, capabilities->arch),
        ExecutorsPage::tr("%n CPUs", nullptr, capabilities->cpus),
        protocol::AgentCapabilities::modeName(capabilities->mode),
        verdict(capabilities->l2Attach, ExecutorsPage::tr("segments")),
        verdict(capabilities->usbAttach, ExecutorsPage::tr("USB")) }
        .join(QStringLiteral(" · "));
}

ExecutorsPage::ExecutorsPage(
    HubApi *api, EventSubscription *events, bool mayUpgrade, QWidget *parent)
    : QWidget(parent)
    , m_api(api)
{
    using Executor = api::Executor;
    auto *model = new JsonTableModel(
        { recordColumn<Executor>(tr("Name"), [](const Executor &e) { return e.name; }),
            recordColumn<Executor>(tr("State"),
                [](const Executor &e) {
                    if (!e.connected)
                        return QString(api::EnrolledDaemon::stateName(e.state)).replace(u'_', u' ');
                    if (e.upgrading)
                        return tr("upgrading");
                    return e.hubMember.isEmpty() ? tr("connected")
                                                 : tr("connected via %1").arg(e.hubMember);
                }),
            // Never an empty cell: what was not reported says so.
            recordColumn<Executor>(tr("Version"),
                [](const Executor &e) {
                    const QString software = describeSoftware(e);
                    return software.isEmpty() ? tr("not reported yet") : software;
                }),
            recordColumn<Executor>(tr("Protocol"),
                [](const Executor &e) {
                    return e.protocolVersion > 0 ? QString::number(e.protocolVersion) : tr("—");
                }),
            recordColumn<Executor>(tr("Last seen"),
                [](const Executor &e) {
                    return e.lastSeen.isValid() ? describeInstant(e.lastSeen) : tr("never");
                }),
            recordColumn<Executor>(tr("Can do"), describeCapabilities) },
        this);
    m_listing = new JsonListing(api, QStringLiteral("executors"), model, this);
    m_listing->setPath(QStringLiteral("/api/executors"));
    m_listing->followEvents(events, { api::hubeventname::kExecutorFamily });
    m_table = new RecordTable(m_listing, tr("Filter by name, state or capability"), this);
    m_table->setEmptyText(
        tr("No executors yet. Enroll one with: cloop executor enroll --name NAME"));
    if (mayUpgrade) {
        m_enroll = new QPushButton(tr("+ &Enroll executor"), this);
        m_enroll->setObjectName(QStringLiteral("enroll"));
        m_table->addButton(m_enroll, false);
        connect(m_enroll, &QPushButton::clicked, this, &ExecutorsPage::openEnroll);
        m_reenroll = new QPushButton(tr("New enrollment &command…"), this);
        m_reenroll->setObjectName(QStringLiteral("reenroll"));
        m_table->addButton(m_reenroll, false);
        connect(m_reenroll, &QPushButton::clicked, this, &ExecutorsPage::openReenroll);
        m_revoke = new QPushButton(tr("&Revoke…"), this);
        m_revoke->setObjectName(QStringLiteral("revoke"));
        m_table->addButton(m_revoke, false);
        connect(m_revoke, &QPushButton::clicked, this, &ExecutorsPage::openRevoke);
        connect(m_table, &RecordTable::selectionChanged, this, &ExecutorsPage::updateActions);
        connect(m_listing, &JsonListing::loaded, this, &ExecutorsPage::updateActions);
        m_upgrade = new QPushButton(tr("&Upgrade…"), this);
        m_upgrade->setObjectName(QStringLiteral("upgrade"));
        m_table->addButton(m_upgrade);
        connect(m_upgrade, &QPushButton::clicked, this, &ExecutorsPage::openUpgrade);
        connect(m_table, &RecordTable::activated, this, [this] {
            if (m_upgrade->isEnabled())
                openUpgrade();
        });
    }
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Executors"), this));
    layout->addWidget(m_table, 1);
    updateActions();
}

void ExecutorsPage::updateActions()
{
    if (!m_revoke)
        return;
    using State = api::EnrolledDaemon::State;
    const auto executor = api::recordIn<api::Executor>(m_table->selectedRecord());
    QString whyNoReenroll;
    QString whyNoRevoke;
    QString whyNoUpgrade;
    if (!executor) {
        whyNoReenroll = whyNoRevoke = whyNoUpgrade = tr("Select an executor first");
    } else if (executor->state == State::Revoked) {
        whyNoReenroll = whyNoRevoke = whyNoUpgrade = tr("%1 is revoked").arg(executor->name);
    } else if (executor->state != State::AwaitingEnrollment) {
        whyNoReenroll
            = tr("%1 has enrolled: revoke it and enroll a new one instead").arg(executor->name);
    }
    if (m_upgrade)
        allowAction(m_upgrade, whyNoUpgrade.isEmpty(),
            tr("Ask the selected executor to upgrade from the hub's releases"), whyNoUpgrade);
    allowAction(m_reenroll, whyNoReenroll.isEmpty(),
        tr("Issue a new one-time command (the earlier one stops working)"), whyNoReenroll);
    allowAction(m_revoke, whyNoRevoke.isEmpty(), tr("Cut it off for good"), whyNoRevoke);
}

void ExecutorsPage::openEnroll()
{
    auto *dialog = new ExecutorEnrollDialog(m_api, this);
    connect(dialog, &QDialog::finished, m_listing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ExecutorsPage::openReenroll()
{
    const auto executor = api::recordIn<api::Executor>(m_table->selectedRecord());
    if (!executor)
        return;
    auto *dialog = new ExecutorEnrollDialog(m_api, executor->id, executor->name, this);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ExecutorsPage::openRevoke()
{
    const auto executor = api::recordIn<api::Executor>(m_table->selectedRecord());
    if (!executor)
        return;
    const qint64 id = executor->id;
    auto *dialog = new ReasonDialog(
        tr("Revoke %1").arg(executor->name),
        tr("%1 is cut off for good: its credential stops working, its runs end, and it can "
           "never connect again.")
            .arg(executor->name),
        tr("Revoke"), false,
        [this, id](const QString &reason, QObject *context, HubApi::Callback done) {
            m_api->post(QStringLiteral("/api/executors/%1/revoke").arg(id),
                QJsonObject { { QStringLiteral("reason"), reason.trimmed() } }, context,
                std::move(done));
        },
        this);
    connect(dialog, &QDialog::finished, m_listing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ExecutorsPage::openUpgrade()
{
    const auto executor = api::recordIn<api::Executor>(m_table->selectedRecord());
    if (!executor)
        return;
    auto *dialog = new UpgradeDialog(m_api, *executor, this);
    connect(dialog, &QDialog::finished, m_listing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

} // namespace cloop::dashboard
