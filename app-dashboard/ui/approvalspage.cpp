#include "app-dashboard/ui/approvalspage.h"

#include "common/api/bindingrequest.h"
#include "common/api/hubeventname.h"

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/core/timewords.h"
#include "app-dashboard/ui/approvedialog.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"

#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

using Request = api::BindingRequest;

JsonTableModel::Column stateColumn()
{
    return recordColumn<Request>(ApprovalsPage::tr("State"), [](const Request &request) {
        return request.isPending() ? ApprovalsPage::tr("waiting for approval")
                                   : QString(Request::stateName(request.state));
    });
}

template <typename Text> JsonTableModel::Column column(const QString &header, Text text)
{
    return recordColumn<Request>(header, text);
}

} // namespace

ApprovalsPage::ApprovalsPage(
    HubApi *api, EventSubscription *events, ForwardersClient *forwarders, QWidget *parent)
    : QWidget(parent)
    , m_forwarders(forwarders)
    , m_approve(new QPushButton(tr("&Approve…"), this))
    , m_deny(new QPushButton(tr("&Deny…"), this))
    , m_tabs(new QTabWidget(this))
{
    const auto table = [&](const QString &path, const api::QueryItems &query,
                           QList<JsonTableModel::Column> columns, const QString &hint) {
        auto *listing = new JsonListing(
            api, QStringLiteral("requests"), new JsonTableModel(std::move(columns), this), this);
        listing->setPath(path, query);
        listing->followEvents(events, { api::hubeventname::kRequestFamily });
        m_listings.append(listing);
        return new RecordTable(listing, hint, this);
    };
    const auto forwarder = column(tr("Forwarder"), [](const Request &r) { return r.forwarder; });
    const auto project = column(tr("Project"), [](const Request &r) { return r.project; });
    const auto askedBy = column(tr("Asked by"), [](const Request &r) { return r.requestedBy; });
    const auto reason = column(tr("Reason"), [](const Request &r) { return r.reason; });
    const auto askedAt
        = recordTimeColumn<Request>(tr("Asked at"), [](const Request &r) { return r.createdAt; });
    const auto decidedBy = column(tr("Decided by"), [](const Request &r) { return r.decidedBy; });
    // No cell is left empty: a decision without a reason says so.
    const auto why = column(tr("Why"), [](const Request &r) {
        if (!r.decisionReason.isEmpty())
            return r.decisionReason;
        return r.isPending() ? tr("not decided yet") : tr("no reason given");
    });
    // What the forwarder carries, as its card says it: a name alone does
    // not tell an approver which bench or network is lent.
    const auto device = column(tr("Device"), [forwarders](const Request &r) {
        const QString words = forwarders->model()->deviceWords(r.forwarderId);
        return words.isEmpty() ? QStringLiteral("#%1").arg(r.forwarderId) : words;
    });
    m_inbox = table(QStringLiteral("/api/requests"), {},
        { forwarder, device, project, askedBy, reason,
            column(tr("For"),
                [](const Request &r) {
                    return r.ttlSeconds > 0 ? describeDuration(r.ttlSeconds) : r.ttl;
                }),
            column(tr("Executor"),
                [](const Request &r) {
                    return r.virtualExecutor.isEmpty() ? tr("any") : r.virtualExecutor;
                }),
            askedAt,
            recordTimeColumn<Request>(
                tr("Expires"), [](const Request &r) { return r.expiresAt; }) },
        tr("Filter the requests waiting for you"));
    m_inbox->setEmptyText(tr("Nothing waits for your decision."));
    m_inbox->addButton(m_approve);
    m_inbox->addButton(m_deny);
    m_mine = table(QStringLiteral("/api/requests"),
        { { QStringLiteral("mine"), QStringLiteral("1") } },
        { forwarder, project, stateColumn(), reason, askedAt, decidedBy, why },
        tr("Filter your requests"));
    m_mine->setEmptyText(tr("You have not asked for a device."));
    m_history
        = table(QStringLiteral("/api/requests"), { { QStringLiteral("all"), QStringLiteral("1") } },
            { forwarder, project, askedBy, stateColumn(), decidedBy,
                recordTimeColumn<Request>(
                    tr("Decided at"), [](const Request &r) { return r.decidedAt; }),
                why },
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
    const auto request = api::recordIn<Request>(m_inbox->selectedRecord());
    if (!request)
        return;
    auto *dialog = new ApproveDialog(m_forwarders, *request, this);
    connect(dialog, &QDialog::accepted, this, &ApprovalsPage::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ApprovalsPage::openDeny()
{
    const auto request = api::recordIn<Request>(m_inbox->selectedRecord());
    if (!request)
        return;
    const qint64 id = request->id;
    auto *dialog = new ReasonDialog(
        tr("Deny request %1").arg(id),
        tr("%1 asked for %2 for %3. They will see your reason.")
            .arg(request->requestedBy, request->forwarder, request->project),
        tr("Deny"), true,
        [this, id](const QString &reason, QObject *context, HubApi::Callback done) {
            m_forwarders->deny(id, reason, context, std::move(done));
        },
        this);
    connect(dialog, &QDialog::accepted, this, &ApprovalsPage::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

} // namespace cloop::dashboard
