#include "app-dashboard/ui/executorspage.h"

#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/recordtable.h"

#include <QJsonObject>
#include <QVBoxLayout>

namespace cloop::dashboard {

QString describeCapabilities(const QJsonObject &capabilities)
{
    if (capabilities.isEmpty())
        return ExecutorsPage::tr("not reported yet");
    const auto verdict = [&capabilities](const char *key, const QString &what) {
        const QJsonObject section = capabilities.value(QLatin1String(key)).toObject();
        if (section.value(QLatin1String("possible")).toBool())
            return ExecutorsPage::tr("%1: yes").arg(what);
        const QString reason = section.value(QLatin1String("reason")).toString();
        return reason.isEmpty() ? ExecutorsPage::tr("%1: no").arg(what)
                                : ExecutorsPage::tr("%1: no (%2)").arg(what, reason);
    };
    return QStringList { QStringLiteral("%1/%2").arg(
                             capabilities.value(QLatin1String("os")).toString(),
                             capabilities.value(QLatin1String("arch")).toString()),
        ExecutorsPage::tr("%n CPUs", nullptr, capabilities.value(QLatin1String("cpus")).toInt()),
        capabilities.value(QLatin1String("mode")).toString(),
        verdict("l2_attach", ExecutorsPage::tr("segments")),
        verdict("usb_attach", ExecutorsPage::tr("USB")) }
        .join(QStringLiteral(" · "));
}

ExecutorsPage::ExecutorsPage(HubApi *api, EventStream *events, QWidget *parent)
    : QWidget(parent)
{
    auto *model = new JsonTableModel(
        { textColumn(tr("Name"), QStringLiteral("name")),
            { tr("State"),
                [](const QJsonObject &e) {
                    if (!e.value(QLatin1String("connected")).toBool())
                        return e.value(QLatin1String("state")).toString();
                    const QString member = e.value(QLatin1String("hub_member")).toString();
                    return member.isEmpty() ? tr("connected") : tr("connected via %1").arg(member);
                } },
            textColumn(tr("Version"), QStringLiteral("version")),
            textColumn(tr("Protocol"), QStringLiteral("protocol")),
            timeColumn(tr("Last seen"), QStringLiteral("last_seen")),
            { tr("Can do"),
                [](const QJsonObject &e) {
                    return describeCapabilities(e.value(QLatin1String("capabilities")).toObject());
                } } },
        this);
    m_listing = new JsonListing(api, QStringLiteral("executors"), model, this);
    m_listing->setPath(QStringLiteral("/api/executors"));
    m_listing->followEvents(events, { QStringLiteral("executor.") });
    m_table = new RecordTable(m_listing, tr("Filter by name, state or capability"), this);
    m_table->setEmptyText(
        tr("No executors yet. Enroll one with: cloop executor enroll --name NAME"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Executors"), this));
    layout->addWidget(m_table, 1);
}

} // namespace cloop::dashboard
