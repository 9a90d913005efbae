#include "app-dashboard/ui/projectspage.h"
#include "app-dashboard/core/plaintooltip.h"

#include "common/api/binding.h"
#include "common/api/hubeventname.h"
#include "common/api/project.h"

#include "app-dashboard/core/forwardersclient.h"
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

ProjectsPage::ProjectsPage(HubApi *api, EventSubscription *events, ForwardersClient *forwarders,
    const api::Identity &identity, QWidget *parent)
    : QWidget(parent)
    , m_forwarders(forwarders)
    , m_identity(identity)
    , m_overview(new PlainLabel(this))
    // The card's words: Bind… and Unbind… wherever a binding is made or ended.
    , m_bind(new QPushButton(tr("&Bind…"), this))
    , m_request(new QPushButton(tr("&Request a device…"), this))
    , m_unbind(new QPushButton(tr("&Unbind…"), this))
{
    using Project = api::Project;
    using Binding = api::Binding;
    auto *projectModel = new JsonTableModel(
        { recordColumn<Project>(tr("Project"), [](const Project &project) { return project.path; }),
            recordColumn<Project>(tr("Your role"),
                [this](const Project &project) {
                    const QString role = roleIn(project.path);
                    return role.isEmpty() ? tr("none") : role;
                }) },
        this);
    m_projectListing = new JsonListing(api, QStringLiteral("projects"), projectModel, this);
    m_projectListing->setPath(QStringLiteral("/api/projects"));
    m_projectListing->followEvents(events, { QStringLiteral("project.") });
    m_projects = new RecordTable(m_projectListing, tr("Filter projects"), this);
    m_projects->setEmptyText(tr("No projects you can see."));

    auto *deviceModel = new JsonTableModel(
        { recordColumn<Binding>(tr("Forwarder"), [](const Binding &b) { return b.forwarder; }),
            recordColumn<Binding>(tr("Executor"),
                [](const Binding &b) {
                    return b.virtualExecutor.isEmpty() ? tr("any") : b.virtualExecutor;
                }),
            recordColumn<Binding>(tr("Sandbox interface"),
                [](const Binding &b) {
                    return QStringList { b.target, b.address }.join(QLatin1Char(' ')).trimmed();
                }),
            recordTimeColumn<Binding>(tr("Until"), [](const Binding &b) { return b.expiresAt; }),
            recordColumn<Binding>(tr("Bound by"), [](const Binding &b) { return b.createdBy; }) },
        this);
    m_deviceListing = new JsonListing(api, QStringLiteral("bindings"), deviceModel, this);
    m_deviceListing->followEvents(
        events, { api::hubeventname::kBindingFamily, api::hubeventname::kForwarderRevoked });
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
    // The projects above their overview: each table gets the page's whole
    // width, so neither is clipped at 1024 pixels.
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_projects);
    split->addWidget(overview);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new PageTitle(tr("Projects"), this));
    layout->addWidget(split, 1);

    connect(m_projects, &RecordTable::selectionChanged, this, [this] {
        const auto project = api::recordIn<api::Project>(m_projects->selectedRecord());
        showProject(project ? project->path : QString());
    });
    connect(m_bind, &QPushButton::clicked, this, [this] { openBinding(false); });
    connect(m_request, &QPushButton::clicked, this, [this] { openBinding(true); });
    connect(m_unbind, &QPushButton::clicked, this, &ProjectsPage::openUnbind);
    showProject({});
}

std::optional<api::ProjectRole> ProjectsPage::roleOf(const QString &project) const
{
    if (m_identity.hubAdmin)
        return api::ProjectRole::Administrator;
    return m_identity.roleIn(project);
}

QString ProjectsPage::roleIn(const QString &project) const
{
    const auto role = roleOf(project);
    return role ? QString(api::projectRoleName(*role)) : QString();
}

void ProjectsPage::showProject(const QString &path)
{
    m_project = path;
    const auto role = roleOf(path);
    const bool administrator = role == api::ProjectRole::Administrator;
    m_overview->setText(path.isEmpty() ? tr("Choose a project to see its forwarded devices.")
                                       : tr("Forwarded devices of %1").arg(path));
    m_bind->setVisible(administrator);
    m_unbind->setVisible(administrator);
    m_request->setVisible(role == api::ProjectRole::Maintainer);
    m_bind->setEnabled(!path.isEmpty());
    m_bind->setToolTip(plainToolTip(tr("Lend a forwarder's device to the runs of %1").arg(path)));
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
    auto *dialog = new BindDialog(m_forwarders,
        request ? BindDialog::Mode::Request : BindDialog::Mode::Bind, {}, m_project, this);
    connect(dialog, &QDialog::accepted, m_deviceListing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

void ProjectsPage::openUnbind()
{
    const auto binding = api::recordIn<api::Binding>(m_devices->selectedRecord());
    if (!binding)
        return;
    auto *dialog = makeUnbindDialog(m_forwarders, binding->id, binding->forwarder, m_project, this);
    connect(dialog, &QDialog::accepted, m_deviceListing, &JsonListing::refresh);
    openModal(dialog);
    Q_EMIT dialogOpened(dialog);
}

} // namespace cloop::dashboard
