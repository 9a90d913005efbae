#include "app-dashboard/ui/auditpage.h"

#include "common/api/auditlogentry.h"

#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/recordtable.h"

#include <QComboBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace cloop::dashboard {

AuditPage::AuditPage(HubApi *api, QWidget *parent)
    : QWidget(parent)
    , m_period(new QComboBox(this))
{
    using Entry = api::AuditLogEntry;
    auto *model = new JsonTableModel(
        { recordTimeColumn<Entry>(tr("When"), [](const Entry &entry) { return entry.at; }),
            recordColumn<Entry>(
                tr("Who"), [](const Entry &entry) { return entry.describeActor(); }),
            recordColumn<Entry>(tr("Action"), [](const Entry &entry) { return entry.action; }),
            recordColumn<Entry>(
                tr("Subject"), [](const Entry &entry) { return entry.describeSubject(); }),
            recordColumn<Entry>(tr("Details"),
                [](const Entry &entry) { return api::describeAuditDetails(entry.details); }) },
        this);
    m_listing = new JsonListing(api, QStringLiteral("entries"), model, this);
    m_table = new RecordTable(m_listing, tr("Filter by who, action, subject or detail"), this);
    m_table->setEmptyText(tr("Nothing happened in this period."));
    m_period->setObjectName(QStringLiteral("period"));
    for (const auto &[text, value] : { std::pair { tr("Last hour"), QStringLiteral("1h") },
             std::pair { tr("Last 24 hours"), QStringLiteral("24h") },
             std::pair { tr("Last 7 days"), QStringLiteral("7d") },
             std::pair { tr("Last 90 days"), QStringLiteral("90d") } })
        m_period->addItem(text, value);
    m_period->setCurrentIndex(1);
    auto *reload = new QPushButton(tr("Reload"), this);
    m_table->addButton(m_period, false);
    m_table->addButton(reload, false);
    m_table->view()->sortByColumn(0, Qt::DescendingOrder);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Audit log"), this));
    layout->addWidget(m_table, 1);
    connect(m_period, &QComboBox::currentIndexChanged, this, &AuditPage::refresh);
    connect(reload, &QPushButton::clicked, this, &AuditPage::refresh);
}

void AuditPage::refresh()
{
    m_listing->setPath(QStringLiteral("/api/audit"),
        { { QStringLiteral("since"), m_period->currentData().toString() } });
    m_listing->refresh();
}

} // namespace cloop::dashboard
