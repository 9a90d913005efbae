#include "app-dashboard/ui/projectspage.h"

#include "app-dashboard/core/forwarderdirectory.h"
#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/ui/binddialog.h"
#include "app-dashboard/ui/pagetitle.h"
#include "app-dashboard/ui/plainlabel.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"

#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

namespace cloop::dashboard {

ProjectsPage::ProjectsPage(HubApi *api, EventStream *events, ForwarderDirectory *directory,
    const QJsonObject &identity, QWidget *parent)
    : QWidget(parent)
    , m_directory(directory)
    , m_identity(identity)
    , m_overview(new PlainLabel(this))
    , m_bind(new QPushButton(tr("&Bind a device…"), this))
    , m_request(new QPushButton(tr("&Request a device…"), this))
    , m_unbind(new QPushButton(tr("&Unbind…"), this))
{
    auto *projectModel = new JsonTableModel(
        { textColumn(tr("Project"), QStringLiteral("path")),
            { tr("Your role"),
                [this](const QJsonObject &project) {
                    const QString role = roleIn(project.value(QLatin1String("path")).toString());
                    return role.isEmpty() ? tr("none") : role;
                } } },
        this);
    m_projectListing = new JsonListing(api, QStringLiteral("projects"), projectModel, this);
    m_projectListing->setPath(QStringLiteral("/api/projects"));
    m_projectListing->followEvents(events, { QStringLiteral("project.") });
    m_projects = new RecordTable(m_projectListing, tr("Filter projects"), this);
    m_projects->setEmptyText(tr("No projects you can see."));

    const auto until = timeColumn(tr("Until"), QStringLiteral("expires_at"));
    auto *deviceModel = new JsonTableModel(
        { textColumn(tr("Forwarder"), QStringLiteral("forwarder")),
            { tr("Executor"),
                [](const QJsonObject &b) {
                    const QString executor = b.value(QLatin1String("virtual_executor")).toString();
                    return executor.isEmpty() ? tr("any") : executor;
                } },
            { tr("In the sandbox as"),
                [](const QJsonObject &b) {
                    return QStringList { b.value(QLatin1String("target")).toString(),
                        b.value(QLatin1String("address")).toString() }
                        .join(QLatin1Char(' '))
                        .trimmed();
                } },
            until, textColumn(tr("Bound by"), QStringLiteral("created_by")) },
        this);
    m_deviceListing = new JsonListing(api, QStringLiteral("bindings"), deviceModel, this);
    m_deviceListing->followEvents(
        events, { QStringLiteral("binding."), QStringLiteral("forwarder.revoked") });
    m_devices = new RecordTable(m_deviceListing, tr("Filter this project's devices"), this);
    m_devices->setEmptyText(tr("Nothing is bound to this project."));
    m_devices->addButton(m_bind, false);
    m_devices->addButton(m_request, false);
    m_devices->addButton(m_unbind);

    auto *overview = new QWidget(this);
    auto *overviewLayout = new QVBoxLayout(overview);
    overviewLayout->setContentsMargins(0, 0, 0, 0);
    QFont heading = m_overview->font();
    heading.setBold(true);
    m_overview->setFont(heading);
    overviewLayout->addWidget(m_overview);
    overviewLayout->addWidget(m_devices, 1);
    auto *split = new QSplitter(this);
    split->addWidget(m_projects);
    split->addWidget(overview);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Projects"), this));
    layout->addWidget(split, 1);

    connect(m_projects, &RecordTable::selectionChanged, this, [this] {
        showProject(m_projects->selectedRecord().value(QLatin1String("path")).toString());
    });
    connect(m_bind, &QPushButton::clicked, this, [this] { openBinding(false); });
    connect(m_request, &QPushButton::clicked, this, [this] { openBinding(true); });
    connect(m_unbind, &QPushButton::clicked, this, &ProjectsPage::openUnbind);
    showProject({});
}

QString ProjectsPage::roleIn(const QString &project) const
{
    if (m_identity.value(QLatin1String("hub_admin")).toBool())
        return QStringLiteral("administrator");
    for (const QJsonValue &role : m_identity.value(QLatin1String("roles")).toArray()) {
        if (role.toObject().value(QLatin1String("project")).toString() == project)
            return role.toObject().value(QLatin1String("role")).toString();
    }
    return {};
}

void ProjectsPage::showProject(const QString &path)
{
    m_project = path;
    const QString role = roleIn(path);
    const bool administrator = role == QLatin1String("administrator");
    m_overview->setText(path.isEmpty() ? tr("Choose a project to see its forwarded devices.")
                                       : tr("Forwarded devices of %1").arg(path));
    m_bind->setVisible(administrator);
    m_unbind->setVisible(administrator);
    m_request->setVisible(!administrator && role == QLatin1String("maintainer"));
    m_bind->setEnabled(!path.isEmpty());
    m_request->setEnabled(!path.isEmpty());
    m_devices->setEnabled(!path.isEmpty());
    // Another project's devices never show under this one's heading.
    m_deviceListing->model()->setRecords({});
    if (path.isEmpty())
        return;
    m_deviceListing->setPath(
        QStringLiteral("/api/bindings"), { { QStringLiteral("project"), path } });
    m_deviceListing->refresh();
}

void ProjectsPage::openBinding(bool request)
{
    if (m_project.isEmpty())
        return;
    auto *dialog = new BindDialog(m_directory,
        request ? BindDialog::Mode::Request : BindDialog::Mode::Bind, {}, m_project, this);
    connect(dialog, &QDialog::accepted, m_deviceListing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ProjectsPage::openUnbind()
{
    const QJsonObject binding = m_devices->selectedRecord();
    if (binding.isEmpty())
        return;
    auto *dialog = makeUnbindDialog(m_directory, binding.value(QLatin1String("id")).toInteger(),
        binding.value(QLatin1String("forwarder")).toString(), m_project, this);
    connect(dialog, &QDialog::accepted, m_deviceListing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

} // namespace cloop::dashboard
