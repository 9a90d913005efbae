#include "app-dashboard/ui/binddialog.h"

#include "common/device/l2/tapdevice.h"
#include "common/util/duration.h"

#include "app-dashboard/core/timewords.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>

namespace cloop::dashboard {

namespace {

constexpr std::chrono::seconds kLongestBinding = std::chrono::hours(24 * 90);

QString titleFor(
    BindDialog::Mode mode, const std::optional<api::Forwarder> &forwarder, const QString &project)
{
    const QString name = forwarder ? forwarder->name : QString();
    if (mode == BindDialog::Mode::Request)
        return name.isEmpty() ? BindDialog::tr("Request a device for %1").arg(project)
                              : BindDialog::tr("Request %1").arg(name);
    return name.isEmpty() ? BindDialog::tr("Bind a device to %1").arg(project)
                          : BindDialog::tr("Bind %1").arg(name);
}

} // namespace

BindDialog::BindDialog(ForwardersClient *forwarders, Mode mode,
    const std::optional<api::Forwarder> &forwarder, const QString &project, QWidget *parent)
    : FormDialog(
        titleFor(mode, forwarder, project), mode == Mode::Bind ? tr("Bind") : tr("Request"), parent)
    , m_forwarders(forwarders)
    , m_mode(mode)
    , m_fixedForwarder(forwarder)
    , m_form(new QFormLayout)
    , m_project(new QComboBox(this))
    , m_executor(new QLineEdit(this))
    , m_ttl(new QComboBox(this))
    , m_ends(new QLabel(this))
    , m_target(new QLineEdit(this))
    , m_address(new QLineEdit(this))
{
    if (!forwarder) {
        m_forwarder = new QComboBox(this);
        m_forwarder->setObjectName(QStringLiteral("forwarder"));
        const ForwarderListModel *model = forwarders->model();
        for (int row = 0; row < model->rowCount(); ++row) {
            const api::Forwarder candidate = model->forwarder(row);
            if (candidate.isRevoked())
                continue;
            m_forwarder->addItem(
                QStringLiteral("%1 — %2").arg(candidate.name, candidate.deviceDescription),
                candidate.id);
        }
        m_form->addRow(tr("&Forwarder:"), m_forwarder);
        connect(m_forwarder, &QComboBox::currentIndexChanged, this, [this] {
            showSegmentFields();
            revalidate();
        });
    }
    m_project->setEditable(true);
    m_project->setObjectName(QStringLiteral("project"));
    m_project->lineEdit()->setPlaceholderText(tr("/srv/projects/…"));
    if (!project.isEmpty()) {
        m_project->setCurrentText(project);
        m_project->setEnabled(false);
    }
    m_executor->setObjectName(QStringLiteral("executor"));
    m_executor->setPlaceholderText(tr("any executor"));
    m_ttl->setEditable(true);
    m_ttl->setObjectName(QStringLiteral("ttl"));
    // The value is what is sent; the text is for people.
    // Presets in the words the card uses for time left.
    for (const auto &[seconds, value] :
        { std::pair { 3600, QStringLiteral("1h") }, std::pair { 8 * 3600, QStringLiteral("8h") },
            std::pair { 24 * 3600, QStringLiteral("24h") },
            std::pair { 7 * 86400, QStringLiteral("7d") },
            std::pair { 30 * 86400, QStringLiteral("30d") },
            std::pair { 90 * 86400, QStringLiteral("90d") } })
        m_ttl->addItem(describeDuration(seconds), value);
    m_ttl->setCurrentIndex(2);
    m_ttl->setToolTip(tr("A preset, or a duration such as 90m, 12h or 1d12h; at most 90 days"));
    m_target->setObjectName(QStringLiteral("target"));
    m_target->setPlaceholderText(QStringLiteral("fwd0"));
    m_address->setObjectName(QStringLiteral("address"));
    m_address->setPlaceholderText(tr("none (DHCP or static inside)"));

    m_form->addRow(tr("&Project:"), m_project);
    m_form->addRow(tr("&Executor:"), m_executor);
    m_form->addRow(tr("&How long:"), m_ttl);
    m_ends->setObjectName(QStringLiteral("ends"));
    m_ends->setForegroundRole(QPalette::PlaceholderText);
    m_form->addRow(QString(), m_ends);
    m_form->addRow(tr("&Sandbox interface:"), m_target);
    m_form->addRow(tr("&Address:"), m_address);
    if (mode == Mode::Request) {
        m_reason = new QLineEdit(this);
        m_reason->setObjectName(QStringLiteral("reason"));
        m_reason->setPlaceholderText(tr("what the device is needed for"));
        m_form->addRow(tr("&Reason:"), m_reason);
        connect(m_reason, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    }
    setContent(m_form);
    setFormWidth(480);
    showSegmentFields();
    connect(m_project, &QComboBox::currentTextChanged, this, &BindDialog::revalidate);
    connect(m_executor, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    connect(m_ttl, &QComboBox::currentTextChanged, this, &BindDialog::revalidate);
    connect(m_ttl, &QComboBox::currentTextChanged, this, &BindDialog::showEnd);
    connect(m_target, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    connect(m_address, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    revalidate();
    showEnd();
}

void BindDialog::showEnd()
{
    const auto ttl = util::parseDuration(terms().ttl);
    if (!ttl || *ttl > kLongestBinding) {
        m_ends->clear();
        return;
    }
    const qint64 seconds = std::chrono::duration_cast<std::chrono::seconds>(*ttl).count();
    if (m_mode == Mode::Request) {
        m_ends->setText(tr("for %1 from its approval").arg(describeDuration(seconds)));
        return;
    }
    const QDateTime now = QDateTime::currentDateTimeUtc();
    m_ends->setText(tr("until %1 (%2)")
                        .arg(describeMoment(now.addSecs(seconds), now), describeDuration(seconds)));
}

std::optional<api::Forwarder> BindDialog::chosenForwarder() const
{
    if (!m_forwarder)
        return m_fixedForwarder;
    const ForwarderListModel *model = m_forwarders->model();
    const int row = model->rowOf(m_forwarder->currentData().toLongLong());
    return row >= 0 ? std::optional<api::Forwarder>(model->forwarder(row)) : std::nullopt;
}

bool BindDialog::isSegment() const
{
    const auto forwarder = chosenForwarder();
    return forwarder && forwarder->device
        && forwarder->device->kind == protocol::DeviceSpec::Kind::Segment;
}

void BindDialog::showSegmentFields()
{
    // Name and address inside the sandbox mean something for a segment only.
    m_form->setRowVisible(m_target, isSegment());
    m_form->setRowVisible(m_address, isSegment());
}

void BindDialog::setProjects(const QStringList &projects)
{
    const QString typed = m_project->currentText();
    m_project->clear();
    m_project->addItems(projects);
    m_project->setCurrentText(typed);
}

BindingFields BindDialog::terms() const
{
    BindingFields terms;
    terms.project = m_project->currentText().trimmed();
    terms.virtualExecutor = m_executor->text().trimmed();
    // A preset's text is for people; its data is what the hub reads.
    const int preset = m_ttl->findText(m_ttl->currentText());
    terms.ttl = preset >= 0 ? m_ttl->itemData(preset).toString() : m_ttl->currentText().trimmed();
    if (isSegment()) {
        terms.target = m_target->text().trimmed();
        terms.address = m_address->text().trimmed();
    }
    return terms;
}

QString BindDialog::problem() const
{
    if (!chosenForwarder())
        return tr("There is no forwarder to choose; enroll one first.");
    const BindingFields t = terms();
    if (t.project.isEmpty())
        return tr("Choose the project whose runs get the device.");
    if (!t.project.startsWith(QLatin1Char('/')))
        return tr("A project is named by its absolute path, such as /srv/projects/bench.");
    const auto ttl = util::parseDuration(t.ttl);
    if (!ttl)
        return tr("How long: write a duration such as 8h, 90m or 1d12h.");
    if (*ttl > kLongestBinding)
        return tr("How long: a binding lasts at most 90 days.");
    if (!t.target.isEmpty()) {
        if (Status name = device::l2::validateInterfaceName(t.target); !name)
            return tr("Interface: %1").arg(name.error().message);
    }
    if (!t.address.isEmpty()) {
        if (Status address = device::l2::validateInterfaceAddress(t.address); !address)
            return tr("Address: %1").arg(address.error().message);
    }
    if (m_reason && m_reason->text().trimmed().isEmpty())
        return tr("Say what the device is needed for; the approver reads it.");
    return {};
}

void BindDialog::carryOut(QObject *context, HubApi::Callback done)
{
    const auto forwarder = chosenForwarder();
    const qint64 forwarderId = forwarder ? forwarder->id : 0;
    if (m_mode == Mode::Request)
        m_forwarders->request(forwarderId, terms(), m_reason->text(), context, std::move(done));
    else
        m_forwarders->bind(forwarderId, terms(), context, std::move(done));
}

} // namespace cloop::dashboard
