#include "app-dashboard/ui/executorspage.h"

#include "common/api/executor.h"
#include "common/api/hubeventname.h"

#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/pagetitle.h"
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
                        return QString(api::EnrolledDaemon::stateName(e.state));
                    if (e.upgrading)
                        return tr("upgrading");
                    return e.hubMember.isEmpty() ? tr("connected")
                                                 : tr("connected via %1").arg(e.hubMember);
                }),
            recordColumn<Executor>(tr("Version"), describeSoftware),
            recordColumn<Executor>(tr("Protocol"),
                [](const Executor &e) {
                    return e.protocolVersion > 0 ? QString::number(e.protocolVersion) : QString();
                }),
            recordTimeColumn<Executor>(
                tr("Last seen"), [](const Executor &e) { return e.lastSeen; }),
            recordColumn<Executor>(tr("Can do"), describeCapabilities) },
        this);
    m_listing = new JsonListing(api, QStringLiteral("executors"), model, this);
    m_listing->setPath(QStringLiteral("/api/executors"));
    m_listing->followEvents(events, { api::hubeventname::kExecutorFamily });
    m_table = new RecordTable(m_listing, tr("Filter by name, state or capability"), this);
    m_table->setEmptyText(
        tr("No executors yet. Enroll one with: cloop executor enroll --name NAME"));
    if (mayUpgrade) {
        m_upgrade = new QPushButton(tr("&Upgrade…"), this);
        m_upgrade->setObjectName(QStringLiteral("upgrade"));
        m_upgrade->setToolTip(tr("Ask the selected executor to upgrade from the hub's releases"));
        m_table->addButton(m_upgrade);
        connect(m_upgrade, &QPushButton::clicked, this, &ExecutorsPage::openUpgrade);
        connect(m_table, &RecordTable::activated, this, [this] { openUpgrade(); });
    }
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Executors"), this));
    layout->addWidget(m_table, 1);
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
