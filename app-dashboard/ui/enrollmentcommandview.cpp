#include "app-dashboard/ui/enrollmentcommandview.h"

#include "app-dashboard/ui/plainlabel.h"

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

namespace {

// A read-only command and the button that copies it.
QHBoxLayout *copyableRow(
    QWidget *parent, QLineEdit *command, const QString &name, const QString &copyText)
{
    command->setObjectName(name);
    command->setReadOnly(true);
    auto *copy = new QPushButton(copyText, parent);
    copy->setObjectName(name + QLatin1String("Copy"));
    QObject::connect(copy, &QPushButton::clicked, command,
        [command] { QApplication::clipboard()->setText(command->text()); });
    auto *row = new QHBoxLayout;
    row->addWidget(command, 1);
    row->addWidget(copy);
    return row;
}

} // namespace

EnrollmentCommandView::EnrollmentCommandView(const QString &where, QWidget *parent)
    : QWidget(parent)
    , m_command(new QLineEdit(this))
    , m_installCommand(new QLineEdit(this))
    , m_validity(new PlainLabel(this))
{
    auto *explain = new QLabel(tr("Run this once on %1. It works a single time.").arg(where), this);
    explain->setWordWrap(true);
    auto *explainInstall = new QLabel(
        tr("Or, as root, install it there as the service that starts with the machine:"), this);
    explainInstall->setWordWrap(true);
    m_validity->setObjectName(QStringLiteral("validity"));
    m_validity->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(explain);
    layout->addLayout(copyableRow(this, m_command, QStringLiteral("command"), tr("&Copy")));
    layout->addWidget(explainInstall);
    layout->addLayout(
        copyableRow(this, m_installCommand, QStringLiteral("installCommand"), tr("C&opy")));
    layout->addWidget(m_validity);
}

void EnrollmentCommandView::present(const QString &command, const QString &installCommand,
    const QDateTime &validUntil, bool replaced)
{
    m_command->setText(command);
    m_installCommand->setText(installCommand);
    QString validity = validUntil.isValid()
        ? tr("Valid until %1.")
              .arg(QLocale().toString(validUntil.toLocalTime(), QLocale::LongFormat))
        : QString();
    if (replaced)
        validity += QLatin1Char(' ') + tr("The earlier command no longer works.");
    m_validity->setText(validity.trimmed());
    m_command->setFocus();
    m_command->selectAll();
}

} // namespace cloop::dashboard
