#include "app-dashboard/ui/enrolldialog.h"

#include "common/api/enrollment.h"

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/ui/plainlabel.h"
#include "common/device/l2/tapdevice.h"

#include <QApplication>
#include <QButtonGroup>
#include <QClipboard>
#include <QDateTime>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

const QRegularExpression kName(QStringLiteral("\\A[a-z0-9._-]{1,63}\\z"));
const QRegularExpression kUsb(
    QStringLiteral("\\A[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(:[!-~]{1,126})?\\z"));

} // namespace

EnrollDialog::EnrollDialog(ForwardersClient *forwarders, QWidget *parent)
    : FormDialog(tr("Enroll a forwarder"), tr("Enroll"), parent)
    , m_forwarders(forwarders)
    , m_pages(new QStackedWidget(this))
    , m_name(new QLineEdit(this))
    , m_usbChoice(new QRadioButton(tr("&USB device"), this))
    , m_interfaceChoice(new QRadioButton(tr("&Network segment"), this))
    , m_device(new QLineEdit(this))
    , m_command(new QLineEdit(this))
    , m_installCommand(new QLineEdit(this))
    , m_validity(new PlainLabel(this))
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

    m_pages->addWidget(askPage);
    buildCommandPage();
    auto *content = new QVBoxLayout;
    content->addWidget(m_pages);
    setContent(content);
    setMinimumWidth(520);

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
    : FormDialog(tr("New enrollment command for %1").arg(name), tr("Issue command"), parent)
    , m_forwarders(forwarders)
    , m_reissueFor(forwarderId)
    , m_pages(new QStackedWidget(this))
    , m_name(new QLineEdit(name, this))
    , m_usbChoice(new QRadioButton(this))
    , m_interfaceChoice(new QRadioButton(this))
    , m_device(new QLineEdit(this))
    , m_command(new QLineEdit(this))
    , m_installCommand(new QLineEdit(this))
    , m_validity(new PlainLabel(this))
{
    // The name and device stay as enrolled; only the command is new.
    for (QWidget *unused : { static_cast<QWidget *>(m_name), static_cast<QWidget *>(m_usbChoice),
             static_cast<QWidget *>(m_interfaceChoice), static_cast<QWidget *>(m_device) })
        unused->setVisible(false);
    auto *explain = new PlainLabel(
        tr("%1 has not connected yet. Its earlier command stops working, and a new single-use "
           "command is issued for the same forwarder.")
            .arg(name),
        this);
    explain->setObjectName(QStringLiteral("explain"));
    explain->setWordWrap(true);
    m_pages->addWidget(explain);
    buildCommandPage();
    auto *content = new QVBoxLayout;
    content->addWidget(m_pages);
    setContent(content);
    setMinimumWidth(520);
    revalidate();
}

void EnrollDialog::buildCommandPage()
{
    auto *commandPage = new QWidget(this);
    // A read-only command and the button that copies it.
    const auto copyableRow
        = [commandPage](QLineEdit *command, const QString &name, const QString &copyText) {
              command->setObjectName(name);
              command->setReadOnly(true);
              auto *copy = new QPushButton(copyText, commandPage);
              copy->setObjectName(name + QLatin1String("Copy"));
              connect(copy, &QPushButton::clicked, command,
                  [command] { QApplication::clipboard()->setText(command->text()); });
              auto *row = new QHBoxLayout;
              row->addWidget(command, 1);
              row->addWidget(copy);
              return row;
          };
    auto *explain = new QLabel(
        tr("Run this once on the machine the device is attached to. It works a single time."),
        commandPage);
    explain->setWordWrap(true);
    auto *explainInstall = new QLabel(
        tr("Or, as root, install it there as the service that starts with the machine:"),
        commandPage);
    explainInstall->setWordWrap(true);
    m_validity->setObjectName(QStringLiteral("validity"));
    m_validity->setWordWrap(true);
    auto *commandLayout = new QVBoxLayout(commandPage);
    commandLayout->setContentsMargins(0, 0, 0, 0);
    commandLayout->addWidget(explain);
    commandLayout->addLayout(copyableRow(m_command, QStringLiteral("command"), tr("&Copy")));
    commandLayout->addWidget(explainInstall);
    commandLayout->addLayout(
        copyableRow(m_installCommand, QStringLiteral("installCommand"), tr("C&opy")));
    commandLayout->addWidget(m_validity);

    m_pages->addWidget(commandPage);
}

QString EnrollDialog::problem() const
{
    if (m_reissueFor > 0)
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
    if (m_reissueFor > 0) {
        m_forwarders->reenroll(m_reissueFor, {}, context, std::move(done));
        return;
    }
    const QString device = m_device->text().trimmed();
    m_forwarders->enroll(m_name->text(), m_usbChoice->isChecked() ? device : QString(),
        m_interfaceChoice->isChecked() ? device : QString(), context, std::move(done));
}

void EnrollDialog::succeeded(const QJsonObject &answer)
{
    const auto enrollment
        = api::recordIn<api::ForwarderEnrollment>(answer).value_or(api::ForwarderEnrollment {});
    m_command->setText(enrollment.command);
    m_installCommand->setText(enrollment.installCommand);
    const QDateTime &until = enrollment.tokenExpiresAt;
    QString validity = until.isValid()
        ? tr("Valid until %1.").arg(QLocale().toString(until.toLocalTime(), QLocale::LongFormat))
        : QString();
    if (m_reissueFor > 0)
        validity += QLatin1Char(' ') + tr("The earlier command no longer works.");
    m_validity->setText(validity.trimmed());
    m_pages->setCurrentIndex(1);
    settle(tr("Close"));
    m_command->setFocus();
    m_command->selectAll();
}

} // namespace cloop::dashboard
