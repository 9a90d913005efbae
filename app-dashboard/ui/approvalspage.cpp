#include "app-dashboard/ui/approvalspage.h"

#include "app-dashboard/core/forwarderdirectory.h"
#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/approvedialog.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"

#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

JsonTableModel::Column stateColumn()
{
    return { ApprovalsPage::tr("State"), [](const QJsonObject &request) {
                const QString state = request.value(QLatin1String("state")).toString();
                return state == QLatin1String("pending") ? ApprovalsPage::tr("waiting for approval")
                                                         : state;
            } };
}

} // namespace

ApprovalsPage::ApprovalsPage(
    HubApi *api, EventStream *events, ForwarderDirectory *directory, QWidget *parent)
    : QWidget(parent)
    , m_directory(directory)
    , m_approve(new QPushButton(tr("&Approve…"), this))
    , m_deny(new QPushButton(tr("&Deny…"), this))
    , m_tabs(new QTabWidget(this))
{
    const auto table = [&](const QString &path, const api::QueryItems &query,
                           QList<JsonTableModel::Column> columns, const QString &hint) {
        auto *listing = new JsonListing(
            api, QStringLiteral("requests"), new JsonTableModel(std::move(columns), this), this);
        listing->setPath(path, query);
        listing->followEvents(events, { QStringLiteral("request.") });
        m_listings.append(listing);
        return new RecordTable(listing, hint, this);
    };
    const auto forwarder = textColumn(tr("Forwarder"), QStringLiteral("forwarder"));
    const auto project = textColumn(tr("Project"), QStringLiteral("project"));
    m_inbox = table(QStringLiteral("/api/requests"), {},
        { forwarder, project, textColumn(tr("Asked by"), QStringLiteral("requested_by")),
            textColumn(tr("Reason"), QStringLiteral("reason")),
            textColumn(tr("For"), QStringLiteral("ttl")),
            textColumn(tr("Executor"), QStringLiteral("virtual_executor")),
            timeColumn(tr("Asked at"), QStringLiteral("created_at")) },
        tr("Filter the requests waiting for you"));
    m_inbox->setEmptyText(tr("Nothing waits for your decision."));
    m_inbox->addButton(m_approve);
    m_inbox->addButton(m_deny);
    m_mine = table(QStringLiteral("/api/requests"),
        { { QStringLiteral("mine"), QStringLiteral("1") } },
        { forwarder, project, stateColumn(), textColumn(tr("Reason"), QStringLiteral("reason")),
            timeColumn(tr("Asked at"), QStringLiteral("created_at")),
            textColumn(tr("Decided by"), QStringLiteral("decided_by")),
            textColumn(tr("Why"), QStringLiteral("decision_reason")) },
        tr("Filter your requests"));
    m_mine->setEmptyText(tr("You have not asked for a device."));
    m_history
        = table(QStringLiteral("/api/requests"), { { QStringLiteral("all"), QStringLiteral("1") } },
            { forwarder, project, textColumn(tr("Asked by"), QStringLiteral("requested_by")),
                stateColumn(), textColumn(tr("Decided by"), QStringLiteral("decided_by")),
                timeColumn(tr("Decided at"), QStringLiteral("decided_at")),
                textColumn(tr("Why"), QStringLiteral("decision_reason")) },
            tr("Filter the history"));

    m_tabs->addTab(m_inbox, tr("Waiting for you"));
    m_tabs->addTab(m_mine, tr("Your requests"));
    m_tabs->addTab(m_history, tr("History"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Approvals"), this));
    layout->addWidget(m_tabs, 1);

    connect(m_approve, &QPushButton::clicked, this, &ApprovalsPage::openApprove);
    connect(m_deny, &QPushButton::clicked, this, &ApprovalsPage::openDeny);
    connect(m_listings.first(), &JsonListing::loaded, this,
        [this] { Q_EMIT pendingCountChanged(pendingCount()); });
}

int ApprovalsPage::pendingCount() const
{
    return m_listings.first()->model()->rowCount();
}

void ApprovalsPage::refresh()
{
    for (JsonListing *listing : std::as_const(m_listings))
        listing->refresh();
}

void ApprovalsPage::openApprove()
{
    const QJsonObject request = m_inbox->selectedRecord();
    if (request.isEmpty())
        return;
    auto *dialog = new ApproveDialog(m_directory, request, this);
    connect(dialog, &QDialog::accepted, this, &ApprovalsPage::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ApprovalsPage::openDeny()
{
    const QJsonObject request = m_inbox->selectedRecord();
    if (request.isEmpty())
        return;
    const qint64 id = request.value(QLatin1String("id")).toInteger();
    auto *dialog = new ReasonDialog(
        tr("Deny request %1").arg(id),
        tr("%1 asked for %2 for %3. They will see your reason.")
            .arg(request.value(QLatin1String("requested_by")).toString(),
                request.value(QLatin1String("forwarder")).toString(),
                request.value(QLatin1String("project")).toString()),
        tr("Deny"), true,
        [this, id](const QString &reason, QObject *context, HubApi::Callback done) {
            m_directory->deny(id, reason, context, std::move(done));
        },
        this);
    connect(dialog, &QDialog::accepted, this, &ApprovalsPage::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

} // namespace cloop::dashboard
