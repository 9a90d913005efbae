#include "app-dashboard/ui/enrolldialog.h"

#include "common/api/enrollment.h"

#include "app-dashboard/core/forwardersclient.h"
#include "common/device/l2/tapdevice.h"

#include <QButtonGroup>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QRadioButton>
#include <QRegularExpression>

namespace cloop::dashboard {

namespace {

const QRegularExpression kName(QStringLiteral("\\A[a-z0-9._-]{1,63}\\z"));
const QRegularExpression kUsb(
    QStringLiteral("\\A[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(:[!-~]{1,126})?\\z"));

} // namespace

EnrollDialog::EnrollDialog(ForwardersClient *forwarders, QWidget *parent)
    : EnrollmentDialog(tr("Enroll a forwarder"), tr("Enroll"),
        tr("the machine the device is attached to"), 0, parent)
    , m_forwarders(forwarders)
    , m_name(new QLineEdit(this))
    , m_usbChoice(new QRadioButton(tr("&USB device"), this))
    , m_interfaceChoice(new QRadioButton(tr("&Network segment"), this))
    , m_device(new QLineEdit(this))
{
    m_name->setObjectName(QStringLiteral("name"));
    m_name->setPlaceholderText(tr("bench-hsm"));
    m_device->setObjectName(QStringLiteral("device"));
    m_usbChoice->setChecked(true);
    auto *kinds = new QButtonGroup(this);
    kinds->addButton(m_usbChoice);
    kinds->addButton(m_interfaceChoice);

    auto *askPage = new QWidget(this);
    auto *kindRow = new QHBoxLayout;
    kindRow->addWidget(m_usbChoice);
    kindRow->addWidget(m_interfaceChoice);
    kindRow->addStretch();
    auto *form = new QFormLayout(askPage);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("&Name:"), m_name);
    form->addRow(tr("Carries:"), kindRow);
    form->addRow(tr("&Device:"), m_device);
    setFirstPage(askPage);

    const auto placeholder = [this] {
        m_device->setPlaceholderText(m_usbChoice->isChecked()
                ? tr("vendor:product[:serial], such as 1050:0407")
                : tr("interface name, such as eth1"));
    };
    placeholder();
    connect(m_usbChoice, &QRadioButton::toggled, this, [this, placeholder] {
        placeholder();
        revalidate();
    });
    connect(m_name, &QLineEdit::textChanged, this, &EnrollDialog::revalidate);
    connect(m_device, &QLineEdit::textChanged, this, &EnrollDialog::revalidate);
    revalidate();
}

EnrollDialog::EnrollDialog(
    ForwardersClient *forwarders, qint64 forwarderId, const QString &name, QWidget *parent)
    : EnrollmentDialog(tr("New enrollment command for %1").arg(name), tr("Issue command"),
        tr("the machine the device is attached to"), forwarderId, parent)
    , m_forwarders(forwarders)
    , m_name(new QLineEdit(name, this))
    , m_usbChoice(new QRadioButton(this))
    , m_interfaceChoice(new QRadioButton(this))
    , m_device(new QLineEdit(this))
{
    // The name and device stay as enrolled; only the command is new.
    for (QWidget *unused : { static_cast<QWidget *>(m_name), static_cast<QWidget *>(m_usbChoice),
             static_cast<QWidget *>(m_interfaceChoice), static_cast<QWidget *>(m_device) })
        unused->setVisible(false);
    setReissueExplanation(
        tr("%1 has not connected yet. Its earlier command stops working, and a new single-use "
           "command is issued for the same forwarder.")
            .arg(name));
    revalidate();
}

QString EnrollDialog::problem() const
{
    if (reissueFor() > 0)
        return {};
    const QString name = m_name->text().trimmed();
    if (name.isEmpty())
        return tr("Give the forwarder a name.");
    if (!kName.match(name).hasMatch())
        return tr("A name is 1 to 63 of a–z, 0–9, '.', '_' and '-'.");
    const QString device = m_device->text().trimmed();
    if (device.isEmpty())
        return m_usbChoice->isChecked()
            ? tr("Which USB device: vendor:product, and the serial when several are alike.")
            : tr("Which network interface the forwarder carries.");
    if (m_usbChoice->isChecked() && !kUsb.match(device).hasMatch())
        return tr("A USB device is four hex digits, a colon, four hex digits, and optionally a "
                  "colon and its serial.");
    if (m_interfaceChoice->isChecked()) {
        if (Status valid = device::l2::validateInterfaceName(device); !valid)
            return valid.error().message;
    }
    return {};
}

void EnrollDialog::carryOut(QObject *context, HubApi::Callback done)
{
    if (reissueFor() > 0) {
        m_forwarders->reenroll(reissueFor(), {}, context, std::move(done));
        return;
    }
    const QString device = m_device->text().trimmed();
    m_forwarders->enroll(m_name->text(), m_usbChoice->isChecked() ? device : QString(),
        m_interfaceChoice->isChecked() ? device : QString(), context, std::move(done));
}

void EnrollDialog::succeeded(const QJsonObject &answer)
{
    presentEnrollment<api::Forwarder>(answer);
}

} // namespace cloop::dashboard
