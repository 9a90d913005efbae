#include "app-dashboard/ui/binddialog.h"

#include "common/device/l2/tapdevice.h"
#include "common/util/duration.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>

namespace cloop::dashboard {

namespace {

constexpr std::chrono::seconds kLongestBinding = std::chrono::hours(24 * 90);

} // namespace

BindDialog::BindDialog(ForwarderDirectory *directory, const QJsonObject &forwarder, QWidget *parent)
    : FormDialog(tr("Bind %1").arg(forwarder.value(QLatin1String("name")).toString()), tr("Bind"), parent),
      m_directory(directory),
      m_forwarderId(forwarder.value(QLatin1String("id")).toInteger()),
      m_segment(forwarder.value(QLatin1String("device")).toObject().value(QLatin1String("kind")).toString()
                == QLatin1String("l2")),
      m_project(new QComboBox(this)),
      m_executor(new QLineEdit(this)),
      m_ttl(new QComboBox(this))
{
    m_project->setEditable(true);
    m_project->setObjectName(QStringLiteral("project"));
    m_project->lineEdit()->setPlaceholderText(tr("/srv/projects/…"));
    m_executor->setObjectName(QStringLiteral("executor"));
    m_executor->setPlaceholderText(tr("any executor"));
    m_ttl->setEditable(true);
    m_ttl->setObjectName(QStringLiteral("ttl"));
    // The value is what is sent; the text is for people.
    for (const auto &[text, value] : {std::pair{tr("1 hour"), QStringLiteral("1h")}, std::pair{tr("8 hours"), QStringLiteral("8h")},
                                      std::pair{tr("24 hours"), QStringLiteral("24h")}, std::pair{tr("7 days"), QStringLiteral("7d")},
                                      std::pair{tr("30 days"), QStringLiteral("30d")}, std::pair{tr("90 days"), QStringLiteral("90d")}})
        m_ttl->addItem(text, value);
    m_ttl->setCurrentIndex(2);
    m_ttl->setToolTip(tr("A preset, or a duration such as 90m, 12h or 1d12h; at most 90 days"));

    auto *form = new QFormLayout;
    form->addRow(tr("&Project:"), m_project);
    form->addRow(tr("&Executor:"), m_executor);
    form->addRow(tr("&How long:"), m_ttl);
    if (m_segment) {
        m_target = new QLineEdit(this);
        m_target->setObjectName(QStringLiteral("target"));
        m_target->setPlaceholderText(QStringLiteral("fwd0"));
        m_address = new QLineEdit(this);
        m_address->setObjectName(QStringLiteral("address"));
        m_address->setPlaceholderText(tr("none (DHCP or static inside)"));
        form->addRow(tr("&Interface in the sandbox:"), m_target);
        form->addRow(tr("&Address:"), m_address);
        connect(m_target, &QLineEdit::textChanged, this, &BindDialog::revalidate);
        connect(m_address, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    }
    setContent(form);
    connect(m_project, &QComboBox::currentTextChanged, this, &BindDialog::revalidate);
    connect(m_executor, &QLineEdit::textChanged, this, &BindDialog::revalidate);
    connect(m_ttl, &QComboBox::currentTextChanged, this, &BindDialog::revalidate);
    revalidate();
}

void BindDialog::setProjects(const QStringList &projects)
{
    const QString typed = m_project->currentText();
    m_project->clear();
    m_project->addItems(projects);
    m_project->setCurrentText(typed);
}

BindingTerms BindDialog::terms() const
{
    BindingTerms terms;
    terms.project = m_project->currentText().trimmed();
    terms.virtualExecutor = m_executor->text().trimmed();
    // A preset's text is for people; its data is what the hub reads.
    const int preset = m_ttl->findText(m_ttl->currentText());
    terms.ttl = preset >= 0 ? m_ttl->itemData(preset).toString() : m_ttl->currentText().trimmed();
    if (m_segment) {
        terms.target = m_target->text().trimmed();
        terms.address = m_address->text().trimmed();
    }
    return terms;
}

QString BindDialog::problem() const
{
    const BindingTerms t = terms();
    if (t.project.isEmpty())
        return tr("Choose the project whose runs get the device.");
    if (!t.project.startsWith(QLatin1Char('/')))
        return tr("A project is named by its absolute path, such as /srv/projects/bench.");
    const auto ttl = util::parseDuration(t.ttl);
    if (!ttl)
        return tr("How long: write a duration such as 8h, 90m or 1d12h.");
    if (*ttl > kLongestBinding)
        return tr("How long: a binding lasts at most 90 days.");
    if (m_segment) {
        if (!t.target.isEmpty()) {
            if (Status name = device::l2::validateInterfaceName(t.target); !name)
                return tr("Interface: %1").arg(name.error().message);
        }
        if (!t.address.isEmpty()) {
            if (Status address = device::l2::validateInterfaceAddress(t.address); !address)
                return tr("Address: %1").arg(address.error().message);
        }
    }
    return {};
}

void BindDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_directory->bind(m_forwarderId, terms(), context, std::move(done));
}

} // namespace cloop::dashboard
